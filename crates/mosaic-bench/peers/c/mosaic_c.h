/* Mosaic through its C API, as a drop-in for boehm.h in the C peers that
 * use it (gcbench.c): the same program, built with -DUSE_MOSAIC against
 * libmosaic, so that Mosaic and the Boehm collector run one binary's code
 * and each process's RSS counts the same harness.
 *
 * Configured as a C embedder of such a program would: every thread's
 * stack and registers scanned conservatively (mosaic_conservative_stack),
 * objects allocated with the inline fast path of mosaic.h under
 * -DBOEHM_INLINE (the counterpart of gc_inline.h) or with mosaic_alloc
 * otherwise, pointer-free ones with MOSAIC_NO_POINTERS. The only objects
 * with pointers are the program's nodes, whose first two words are
 * references (`trace` visits them). Heap limit: MOSAIC_MAX_HEAP (and every
 * other MOSAIC_* variable) from the environment.
 *   cc -O2 gcbench.c -DUSE_MOSAIC [-DBOEHM_INLINE] \
 *      $(pkg-config --cflags --libs mosaic) -lpthread -o gcbench_mosaic */
#ifndef MOSAIC_BENCH_MOSAIC_C_H
#define MOSAIC_BENCH_MOSAIC_C_H
#include <stdio.h>
#include <stdlib.h>
#include "mosaic.h"
#include "common.h"

static mosaic_heap *mc_heap;
static __thread mosaic_mutator *mc_m;
static __thread const mosaic_fast_path *mc_fp;

/* Nothing per thread beyond the mutator: BOEHM_NEW's free lists. */
typedef char BoehmFreeLists[1];
#define BOEHM_NEW(result, bytes, fl) ((void)(fl), (result) = mosaic_alloc_inline(mc_m, mc_fp, (bytes)))
#define GC_MALLOC(bytes) mosaic_alloc(mc_m, (bytes), 0)
#define GC_MALLOC_ATOMIC(bytes) mosaic_alloc(mc_m, (bytes), MOSAIC_NO_POINTERS)

static void mc_trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)obj);
    mosaic_visit(t, (void **)obj + 1);
}
static void mc_roots(void *ctx, mosaic_tracer *t) {
    (void)ctx;
    (void)t;
}
static void mc_fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, mosaic_last_error_message());
    exit(1);
}
static void boehm_init(void) {
    mosaic_embedder e = {0};
    e.trace = mc_trace;
    e.roots = mc_roots;
    mc_heap = mosaic_heap_new(NULL, &e);
    if (!mc_heap) mc_fail("mosaic_heap_new");
}
/* Each thread that allocates: a mutator whose stack is scanned. */
static void mc_thread_start(void) {
    mc_m = mosaic_mutator_new(mc_heap);
    if (!mc_m) mc_fail("mosaic_mutator_new");
    if (mosaic_conservative_stack(mc_m, true) != MOSAIC_OK) mc_fail("mosaic_conservative_stack");
    mc_fp = mosaic_mutator_fast_path(mc_m);
}
static void mc_thread_end(void) {
    mosaic_mutator_free(mc_m);
    mc_m = NULL;
}
static inline void boehm_result(unsigned long long check) {
    mosaic_stats s;
    if (mosaic_heap_stats(mc_heap, &s) != MOSAIC_OK) mc_fail("mosaic_heap_stats");
    print_result(check, (long)s.collections, (double)(s.mark_time_ns + s.sweep_time_ns) / 1e6);
}
#endif
