/* MOSAIC_SIZE_CLASSES=16,48,96 (set by the test harness) reaches the heap
 * both through a NULL config and through mosaic_config_from_env. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"


static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    (void)obj;
    (void)t;
}

/* The heap has exactly the pools 16, 48 and 96. */
static void check_pools(mosaic_heap *h, const char *how) {
    CHECK(h != NULL, "%s: heap: %s", how, mosaic_last_error_message());
    if (!h) return;
    mosaic_stats st;
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK, "%s: stats", how);
    CHECK(st.pool_count == 3, "%s: %zu pools, expected 3", how, st.pool_count);
    const size_t want[3] = {16, 48, 96};
    for (size_t i = 0; i < 3; i++) {
        mosaic_pool_stats ps;
        CHECK(mosaic_heap_pool_stats(h, i, &ps) == MOSAIC_OK, "%s: pool %zu", how, i);
        CHECK(ps.slot_size == want[i], "%s: pool %zu is %zu bytes, expected %zu", how, i, ps.slot_size, want[i]);
    }
    mosaic_heap_free(h);
}

int main(void) {
    const char *v = getenv("MOSAIC_SIZE_CLASSES");
    CHECK(v && strcmp(v, "16,48,96") == 0, "the harness sets MOSAIC_SIZE_CLASSES=16,48,96");
    mosaic_embedder e = {.trace = trace};

    check_pools(mosaic_heap_new(NULL, &e), "NULL config");

    mosaic_config c;
    CHECK(mosaic_config_from_env(&c) == MOSAIC_OK, "from_env: %s", mosaic_last_error_message());
    CHECK(c.size_classes == MOSAIC_CLASSES_CUSTOM, "size_classes %u", c.size_classes);
    CHECK(c.class_count == 3 && c.class_sizes[0] == 16 && c.class_sizes[1] == 48 && c.class_sizes[2] == 96,
          "class list: %zu classes, %u %u %u", c.class_count, c.class_sizes[0], c.class_sizes[1], c.class_sizes[2]);
    check_pools(mosaic_heap_new(&c, &e), "mosaic_config_from_env");

    /* A preset by name fills in its table. */
    setenv("MOSAIC_SIZE_CLASSES", "ruby", 1);
    CHECK(mosaic_config_from_env(&c) == MOSAIC_OK, "from_env ruby: %s", mosaic_last_error_message());
    CHECK(c.size_classes == MOSAIC_CLASSES_RUBY && c.class_count == 5 && c.class_sizes[0] == 40 &&
              c.class_sizes[4] == 640,
          "ruby: %u, %zu classes", c.size_classes, c.class_count);

    /* A bad list: MOSAIC_ERR_CONFIG saying what is wrong, defaults in out. */
    setenv("MOSAIC_SIZE_CLASSES", "16,17", 1);
    CHECK(mosaic_config_from_env(&c) == MOSAIC_ERR_CONFIG, "from_env with a bad list");
    CHECK(mosaic_last_error() == MOSAIC_ERR_CONFIG && strstr(mosaic_last_error_message(), "size class 17 must be a multiple of 8") &&
              strstr(mosaic_last_error_message(), "mosaic_config_from_env"),
          "message: %s", mosaic_last_error_message());
    CHECK(c.size_classes == MOSAIC_CLASSES_DEFAULT && c.class_count == 32 && c.class_sizes[31] == 8192,
          "defaults after a bad variable: %u, %zu classes", c.size_classes, c.class_count);
    CHECK(mosaic_heap_new(NULL, &e) == NULL && mosaic_last_error() == MOSAIC_ERR_CONFIG &&
              strstr(mosaic_last_error_message(), "mosaic_heap_new"),
          "heap_new(NULL config) with a bad list: %s", mosaic_last_error_message());

    printf("%d failures\n", failures);
    return failures != 0;
}
