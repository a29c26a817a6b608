/* mosaic_last_error: every function that can fail reports a NULL handle as
 * MOSAIC_ERR_INVALID_ARGUMENT with a message naming the function, and a
 * successful call resets the error to MOSAIC_OK with an empty message. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"



/* The last call succeeded: MOSAIC_OK and "". */
#define EXPECT_OK(fn)                                                                        \
    do {                                                                                     \
        mosaic_error got_ = mosaic_last_error();                                             \
        const char *msg_ = mosaic_last_error_message();                                      \
        CHECK(got_ == MOSAIC_OK, "%s succeeded but the error is %d (%s)", fn, (int)got_, msg_); \
        CHECK(msg_[0] == '\0', "%s succeeded but the message is \"%s\"", fn, msg_);          \
    } while (0)

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)obj); /* objects are one reference */
}

static void set_flag(void *arg) { *(int *)arg = 42; }

/* A thread that fails, recovers, fails again and exits with its error set:
 * none of it may leak into the main thread's error. */
static void *other_thread(void *arg) {
    int *ok = arg;
    mosaic_config c;
    *ok = mosaic_config_default(NULL) == MOSAIC_ERR_INVALID_ARGUMENT &&
          mosaic_config_default(&c) == MOSAIC_OK && mosaic_last_error() == MOSAIC_OK &&
          mosaic_config_from_env(NULL) == MOSAIC_ERR_INVALID_ARGUMENT;
    return NULL;
}

int main(void) {
    mosaic_embedder e = {.trace = trace};
    mosaic_config c;

    CHECK(mosaic_config_default(NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "config_default(NULL)");
    EXPECT_INVALID("mosaic_config_default");
    CHECK(mosaic_config_default(&c) == MOSAIC_OK, "config_default");
    EXPECT_OK("mosaic_config_default");

    CHECK(mosaic_config_from_env(NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "config_from_env(NULL)");
    EXPECT_INVALID("mosaic_config_from_env");
    CHECK(mosaic_config_from_env(&c) == MOSAIC_OK, "config_from_env");
    EXPECT_OK("mosaic_config_from_env");
    c.max_heap = 16u << 20;

    CHECK(mosaic_heap_new(&c, NULL) == NULL, "heap_new without embedder");
    EXPECT_INVALID("mosaic_heap_new");
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    CHECK(h != NULL, "heap_new");
    EXPECT_OK("mosaic_heap_new");

    CHECK(mosaic_mutator_new(NULL) == NULL, "mutator_new(NULL)");
    EXPECT_INVALID("mosaic_mutator_new");
    mosaic_mutator *m = mosaic_mutator_new(h);
    CHECK(m != NULL, "mutator_new");
    EXPECT_OK("mosaic_mutator_new");

    CHECK(mosaic_alloc(NULL, 16, 0) == NULL, "alloc(NULL)");
    EXPECT_INVALID("mosaic_alloc");
    void **p = mosaic_alloc(m, sizeof(void *), 0);
    CHECK(p != NULL && *p == NULL, "alloc");
    EXPECT_OK("mosaic_alloc");
    /* Errors from the collector name the function too. */
    CHECK(mosaic_alloc(m, SIZE_MAX, 0) == NULL, "alloc(SIZE_MAX)");
    EXPECT_ERROR(MOSAIC_ERR_TOO_LARGE, "mosaic_alloc");
    CHECK(mosaic_alloc(m, 8, 0x80) == NULL, "alloc with bad flags");
    EXPECT_INVALID("mosaic_alloc");
    void **q = mosaic_alloc(m, sizeof(void *), MOSAIC_NO_POINTERS);
    CHECK(q != NULL, "alloc after a failure");
    EXPECT_OK("mosaic_alloc");

    mosaic_collect(NULL);
    EXPECT_INVALID("mosaic_collect");
    mosaic_collect(m);
    EXPECT_OK("mosaic_collect");

    mosaic_finish_sweep(NULL);
    EXPECT_INVALID("mosaic_finish_sweep");
    mosaic_finish_sweep(m);
    EXPECT_OK("mosaic_finish_sweep");

    mosaic_safepoint(NULL);
    EXPECT_INVALID("mosaic_safepoint");
    mosaic_safepoint(m);
    EXPECT_OK("mosaic_safepoint");

    int flag = 0;
    mosaic_blocking(NULL, set_flag, &flag);
    EXPECT_INVALID("mosaic_blocking");
    mosaic_blocking(m, NULL, &flag);
    EXPECT_INVALID("mosaic_blocking");
    CHECK(flag == 0, "blocking ran something on bad input");
    mosaic_blocking(m, set_flag, &flag);
    EXPECT_OK("mosaic_blocking");
    CHECK(flag == 42, "blocking did not run the function");

    /* The collection above freed the unrooted p and q; allocate again. */
    p = mosaic_alloc(m, sizeof(void *), 0);
    CHECK(mosaic_root_new(NULL, p) == NULL, "root_new(NULL)");
    EXPECT_INVALID("mosaic_root_new");
    mosaic_root *r = mosaic_root_new(m, p);
    CHECK(r != NULL, "root_new");
    EXPECT_OK("mosaic_root_new");

    CHECK(mosaic_root_get(NULL) == NULL, "root_get(NULL)");
    EXPECT_INVALID("mosaic_root_get");
    CHECK(mosaic_root_get(r) == p, "root_get");
    EXPECT_OK("mosaic_root_get");

    mosaic_root_set(NULL, p);
    EXPECT_INVALID("mosaic_root_set");
    mosaic_root_set(r, NULL);
    EXPECT_OK("mosaic_root_set");
    CHECK(mosaic_root_get(r) == NULL, "root_set(NULL) emptied the root");
    mosaic_root_set(r, p);
    CHECK(mosaic_root_get(r) == p, "root_set(p)");

    CHECK(!mosaic_is_object(NULL, p), "is_object(NULL)");
    EXPECT_INVALID("mosaic_is_object");
    CHECK(mosaic_is_object(h, p), "is_object");
    EXPECT_OK("mosaic_is_object");
    int local = 0;
    CHECK(!mosaic_is_object(NULL, &local), "is_object(NULL, local)");
    CHECK(!mosaic_is_object(h, &local), "is_object(local)"); /* an answer, not an error */
    EXPECT_OK("mosaic_is_object");

    CHECK(mosaic_object_size(NULL, p) == 0, "object_size(NULL)");
    EXPECT_INVALID("mosaic_object_size");
    CHECK(mosaic_object_size(h, &local) == 0, "object_size(local)");
    EXPECT_ERROR(MOSAIC_ERR_FOREIGN_POINTER, "mosaic_object_size");
    CHECK(mosaic_object_size(h, p) == 16, "object_size");
    EXPECT_OK("mosaic_object_size");

    mosaic_stats st;
    CHECK(mosaic_heap_stats(NULL, &st) == MOSAIC_ERR_INVALID_ARGUMENT, "heap_stats(NULL)");
    EXPECT_INVALID("mosaic_heap_stats");
    CHECK(mosaic_heap_stats(h, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "heap_stats(h, NULL)");
    EXPECT_INVALID("mosaic_heap_stats");
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK && st.collections == 1, "heap_stats");
    EXPECT_OK("mosaic_heap_stats");

    mosaic_pool_stats ps;
    CHECK(mosaic_heap_pool_stats(NULL, 0, &ps) == MOSAIC_ERR_INVALID_ARGUMENT, "pool_stats(NULL)");
    EXPECT_INVALID("mosaic_heap_pool_stats");
    CHECK(mosaic_heap_pool_stats(h, 0, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "pool_stats(h, 0, NULL)");
    EXPECT_INVALID("mosaic_heap_pool_stats");
    CHECK(mosaic_heap_pool_stats(h, 999, &ps) == MOSAIC_ERR_INVALID_ARGUMENT, "pool_stats(999)");
    EXPECT_INVALID("mosaic_heap_pool_stats");
    CHECK(mosaic_heap_pool_stats(h, 0, &ps) == MOSAIC_OK && ps.slot_size == 16, "pool_stats");
    EXPECT_OK("mosaic_heap_pool_stats");

    char line[512];
    CHECK(mosaic_stats_summary(NULL, line, sizeof line) == 0, "summary(NULL)");
    EXPECT_INVALID("mosaic_stats_summary");
    size_t n = mosaic_stats_summary(h, line, sizeof line);
    CHECK(n > 0 && strlen(line) == n, "summary");
    EXPECT_OK("mosaic_stats_summary");
    CHECK(mosaic_stats_summary(h, NULL, 0) == n, "summary length only");
    EXPECT_OK("mosaic_stats_summary");

    /* The maximum heap at run time: lowered, the allocation that does not
     * fit is refused with OUT_OF_MEMORY (the live chain stays whole);
     * raised back, it fits; never above the creation maximum. */
    CHECK(mosaic_set_max_heap(NULL, 8u << 20) == 0, "set_max_heap(NULL)");
    EXPECT_INVALID("mosaic_set_max_heap");
    CHECK(mosaic_set_max_heap(h, 32u << 20) == 0, "set_max_heap above the creation maximum");
    EXPECT_INVALID("mosaic_set_max_heap");
    CHECK(mosaic_set_max_heap(h, 4u << 20) == 4u << 20, "set_max_heap(4 MiB)");
    EXPECT_OK("mosaic_set_max_heap");
    mosaic_root *chain = mosaic_root_new(m, NULL);
    size_t links = 0;
    for (;;) {
        void **link = mosaic_alloc(m, 4096, 0);
        if (link == NULL) break;
        *link = mosaic_root_get(chain);
        mosaic_root_set(chain, link);
        links++;
    }
    EXPECT_ERROR(MOSAIC_ERR_OUT_OF_MEMORY, "mosaic_alloc");
    CHECK(links * 4096 <= (4u << 20) && links * 4096 >= (1u << 20), "%zu links kept under 4 MiB", links);
    CHECK(mosaic_set_max_heap(h, 16u << 20) == 16u << 20, "set_max_heap back to 16 MiB");
    void **more = mosaic_alloc(m, 4096, 0);
    CHECK(more != NULL, "alloc after raising the maximum");
    size_t counted = 0;
    for (void **l = mosaic_root_get(chain); l != NULL; l = *l) counted++;
    CHECK(counted == links, "chain of %zu links has %zu", links, counted);
    mosaic_root_free(chain);

    /* Errors are per thread. */
    CHECK(mosaic_alloc(NULL, 8, 0) == NULL, "alloc(NULL) again");
    pthread_t t;
    int thread_ok = 0;
    CHECK(pthread_create(&t, NULL, other_thread, &thread_ok) == 0, "pthread_create");
    pthread_join(t, NULL);
    CHECK(thread_ok, "the other thread saw its own errors");
    EXPECT_INVALID("mosaic_alloc");
    CHECK(mosaic_alloc(m, 8, 0) != NULL, "alloc after the thread");
    EXPECT_OK("mosaic_alloc");

    /* The free functions ignore NULL like free(): the last error stays. */
    CHECK(mosaic_alloc(NULL, 8, 0) == NULL, "alloc(NULL) before the frees");
    mosaic_root_free(NULL);
    mosaic_mutator_free(NULL);
    mosaic_heap_free(NULL);
    EXPECT_INVALID("mosaic_alloc");
    mosaic_root_free(r);
    EXPECT_OK("mosaic_root_free");
    CHECK(mosaic_alloc(NULL, 8, 0) == NULL, "alloc(NULL) before mutator_free");
    mosaic_mutator_free(m);
    EXPECT_OK("mosaic_mutator_free");
    CHECK(mosaic_alloc(NULL, 8, 0) == NULL, "alloc(NULL) before heap_free");
    mosaic_heap_free(h);
    EXPECT_OK("mosaic_heap_free");

    printf("%d failures\n", failures);
    return failures != 0;
}
