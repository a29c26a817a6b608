/* The inline fast path (mosaic_alloc_inline, mosaic_safepoint_inline) and
 * MOSAIC_UNINIT: inline objects are zeroed, distinct, of the right slot
 * size and survive collections like mosaic_alloc's; allocation through
 * the inline path still triggers collections (it is counted); a thread
 * polling mosaic_safepoint_inline lets another collect; MOSAIC_UNINIT
 * objects are pointer-free (never traced) and may hold old bytes. Prints
 * ns per allocation for mosaic_alloc, mosaic_alloc_inline and
 * MOSAIC_UNINIT (the C side of BENCHMARKS.md's allocation table). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static mosaic_heap *heap;
static atomic_int polling, stop;

static void *poller(void *arg) {
    (void)arg;
    mosaic_mutator *m = mosaic_mutator_new(heap);
    const mosaic_fast_path *fp = mosaic_mutator_fast_path(m);
    atomic_store(&polling, 1);
    while (!atomic_load(&stop)) mosaic_safepoint_inline(m, fp); /* never allocates */
    mosaic_mutator_free(m);
    return NULL;
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 256u << 20;
    c.heap_min = 1u << 20;
    heap = mosaic_heap_new(&c, &e);
    CHECK(heap != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(heap);
    const mosaic_fast_path *fp = mosaic_mutator_fast_path(m);
    CHECK(fp != NULL && fp->class_of_len > 0, "fast path");
    CHECK(mosaic_mutator_fast_path(NULL) == NULL, "NULL mutator");
    EXPECT_INVALID("mosaic_mutator_fast_path");

    /* A list kept alive through a root, built with the inline path. */
    mosaic_root *keep = mosaic_root_new(m, NULL);
    enum { N = 200000 };
    for (uint64_t i = 0; i < N; i++) {
        Obj *o = mosaic_alloc_inline(m, fp, sizeof(Obj));
        CHECK(o != NULL, "inline alloc %llu", (unsigned long long)i);
        if (!o) break;
        CHECK(o->ref == NULL && o->id == 0, "zeroed");
        CHECK(mosaic_object_size(heap, o) == 16, "slot size %zu", mosaic_object_size(heap, o));
        o->id = i;
        o->ref = mosaic_root_get(keep);
        mosaic_root_set(keep, o);
        for (int g = 0; g < 4; g++) mosaic_alloc_inline(m, fp, 40); /* garbage */
    }
    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    CHECK(st.collections > 0, "inline allocation is counted and collects");
    mosaic_collect(m);
    uint64_t n = 0, want = N;
    for (Obj *o = mosaic_root_get(keep); o; o = o->ref, n++) CHECK(o->id == --want, "list order");
    CHECK(n == N, "%llu of %d survived", (unsigned long long)n, N);

    /* A thread that only polls lets this one collect. */
    pthread_t t;
    pthread_create(&t, NULL, poller, NULL);
    while (!atomic_load(&polling)) usleep(100);
    mosaic_heap_stats(heap, &st);
    uint64_t before = st.collections;
    for (int i = 0; i < 3; i++) mosaic_collect(m);
    mosaic_heap_stats(heap, &st);
    CHECK(st.collections == before + 3, "collected while the other thread polled");
    atomic_store(&stop, 1);
    pthread_join(t, NULL);

    /* MOSAIC_UNINIT: pointer-free, and may return old bytes. One object
     * stays live so that its page is kept (an empty page goes back to the
     * page resource). */
    mosaic_root *one = NULL;
    for (int i = 0; i < 1000; i++) {
        void *p = mosaic_alloc(m, 64, MOSAIC_NO_POINTERS);
        memset(p, 0xAB, 64);
        if (i == 0) one = mosaic_root_new(m, p);
    }
    mosaic_collect(m);
    mosaic_finish_sweep(m);
    int dirty = 0;
    for (int i = 0; i < 1000; i++) {
        unsigned char *p = mosaic_alloc(m, 64, MOSAIC_UNINIT);
        CHECK(p != NULL, "uninit alloc");
        dirty += p[0] == 0xAB;
        /* Stale bytes that look like pointers are never traced: verify
         * mode would stop on them. */
        memcpy(p, &p, sizeof p);
    }
    CHECK(dirty > 0, "UNINIT returned only cleared memory");
    Obj *after = mosaic_alloc(m, 64, 0);
    CHECK(after && after->ref == NULL && after->id == 0, "zeroed allocation after UNINIT ones");
    mosaic_collect(m);

    /* ns per allocation, nothing kept: call, inline, uninit. */
    mosaic_root_set(keep, NULL);
    mosaic_collect(m);
    enum { M = 5000000 };
    volatile uintptr_t sink = 0;
    double t0 = now_ns();
    for (int i = 0; i < M; i++) sink += (uintptr_t)mosaic_alloc(m, 32, 0);
    double t1 = now_ns();
    for (int i = 0; i < M; i++) sink += (uintptr_t)mosaic_alloc_inline(m, fp, 32);
    double t2 = now_ns();
    for (int i = 0; i < M; i++) sink += (uintptr_t)mosaic_alloc(m, 32, MOSAIC_UNINIT);
    double t3 = now_ns();
    printf("ns/alloc 32 B: mosaic_alloc %.2f, mosaic_alloc_inline %.2f, MOSAIC_UNINIT %.2f\n", (t1 - t0) / M,
           (t2 - t1) / M, (t3 - t2) / M);

    mosaic_root_free(one);
    mosaic_root_free(keep);
    mosaic_mutator_free(m);
    mosaic_heap_free(heap);
    printf("%d failures\n", failures);
    return failures != 0;
}
