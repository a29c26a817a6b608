/* A custom size-class list written into mosaic_config reaches the heap;
 * bad lists are MOSAIC_ERR_CONFIG with a message saying what is wrong. */
#include <stdio.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"


static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    (void)obj;
    (void)t;
}

static mosaic_embedder e = {.trace = trace};

/* The list is rejected with MOSAIC_ERR_CONFIG and a message containing `why`. */
static void rejected(size_t count, const uint32_t *sizes, size_t n, const char *why) {
    mosaic_config c;
    mosaic_config_default(&c);
    c.size_classes = MOSAIC_CLASSES_CUSTOM;
    c.class_count = count;
    memcpy(c.class_sizes, sizes, n * sizeof *sizes);
    CHECK(mosaic_heap_new(&c, &e) == NULL, "%s: accepted", why);
    const char *msg = mosaic_last_error_message();
    CHECK(mosaic_last_error() == MOSAIC_ERR_CONFIG, "%s: error %d", why, (int)mosaic_last_error());
    CHECK(strstr(msg, "mosaic_heap_new: invalid configuration") && strstr(msg, why), "%s: message: %s", why, msg);
}

int main(void) {
    mosaic_config c;
    CHECK(mosaic_config_default(&c) == MOSAIC_OK, "config_default");
    CHECK(c.size_classes == MOSAIC_CLASSES_DEFAULT && c.class_count == 32, "default table: %zu", c.class_count);
    CHECK(c.class_sizes[0] == 16 && c.class_sizes[7] == 128 && c.class_sizes[8] == 160 && c.class_sizes[31] == 8192,
          "default table sizes");

    /* Four custom pools, and allocation lands in the right one. */
    const uint32_t sizes[] = {24, 64, 200, 1024};
    c.size_classes = MOSAIC_CLASSES_CUSTOM;
    c.class_count = 4;
    memcpy(c.class_sizes, sizes, sizeof sizes);
    c.max_heap = 16u << 20;
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_stats st;
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK && st.pool_count == 4, "%zu pools", st.pool_count);
    for (size_t i = 0; i < 4; i++) {
        mosaic_pool_stats ps;
        CHECK(mosaic_heap_pool_stats(h, i, &ps) == MOSAIC_OK && ps.slot_size == sizes[i], "pool %zu: %zu bytes", i,
              ps.slot_size);
    }
    mosaic_mutator *m = mosaic_mutator_new(h);
    CHECK(mosaic_object_size(h, mosaic_alloc(m, 100, 0)) == 200, "100 bytes get a 200-byte slot");
    CHECK(mosaic_object_size(h, mosaic_alloc(m, 1, 0)) == 24, "1 byte gets a 24-byte slot");
    mosaic_mutator_free(m);
    mosaic_heap_free(h);

    const uint32_t descending[] = {48, 16}, odd[] = {17}, huge[] = {32768}, fine[] = {16};
    rejected(0, fine, 1, "class_count 0 must be between 1 and 64");
    rejected(65, fine, 1, "class_count 65 must be between 1 and 64");
    rejected(2, descending, 2, "must ascend");
    rejected(1, odd, 1, "multiple of 8");
    rejected(1, huge, 1, "multiple of 8");
    mosaic_config_default(&c);
    c.size_classes = 7;
    CHECK(mosaic_heap_new(&c, &e) == NULL && mosaic_last_error() == MOSAIC_ERR_CONFIG &&
              strstr(mosaic_last_error_message(), "unknown size_classes 7"),
          "unknown preset: %s", mosaic_last_error_message());

    printf("%d failures\n", failures);
    return failures != 0;
}
