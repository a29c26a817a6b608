/* Boehm collector setup for the peers: times every collection through
 * GC_set_on_collection_event, from GC_EVENT_START to GC_EVENT_END: the
 * stop-the-world marking plus the collection's finish (start of reclaim,
 * under the allocator lock). Boehm sweeps lazily: the blocks it reclaims
 * later, inside allocations, are not counted. Counting starts at
 * boehm_init, before the timed part. */
#ifndef MOSAIC_BENCH_BOEHM_H
#define MOSAIC_BENCH_BOEHM_H
#define GC_THREADS
#include <gc.h>
#include "common.h"

static double gc_start_ns, gc_total_ns;
static void on_gc_event(GC_EventType e) {
    if (e == GC_EVENT_START) {
        gc_start_ns = now_ns();
    } else if (e == GC_EVENT_END) {
        double d = now_ns() - gc_start_ns;
        gc_total_ns += d;
        if (npauses < MAX_PAUSES) pauses_ns[npauses++] = d;
    }
}
static void boehm_init(void) {
    GC_INIT();
    GC_set_on_collection_event(on_gc_event);
}
static void boehm_result_ns(unsigned long long check, double ns_per_alloc) {
    print_result_ns(check, (long)GC_get_gc_no(), gc_total_ns / 1e6, ns_per_alloc);
}
static inline void boehm_result(unsigned long long check) { boehm_result_ns(check, -1); }
#endif
