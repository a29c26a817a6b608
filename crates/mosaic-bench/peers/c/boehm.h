/* Boehm collector setup for the peers: times every collection through
 * GC_set_on_collection_event, from GC_EVENT_START to GC_EVENT_END: the
 * stop-the-world marking plus the collection's finish (start of reclaim,
 * under the allocator lock). Boehm sweeps lazily: the blocks it reclaims
 * later, inside allocations, are not counted. Counting starts at
 * boehm_init, before the timed part.
 *
 * Configured as a performance-minded user of these programs would (they
 * keep only pointers to the start of objects):
 * - GC_set_all_interior_pointers(0) before GC_INIT: Debian's build adds one
 *   byte to every object otherwise (a 16-byte cell takes 32 bytes).
 *   BOEHM_INTERIOR_POINTERS=1 in the environment keeps the default.
 * - GC_start_mark_threads() after GC_INIT: the parallel markers otherwise
 *   start only when the program creates its first thread, so a
 *   single-threaded program would mark on one core.
 * - BOEHM_NEW (with -DBOEHM_INLINE, or a program's own inline mode):
 *   gc_inline.h's GC_MALLOC_WORDS, the inline thread-local free lists a
 *   compiler that targets the collector uses, for pointer-holding objects.
 *   The free-list array must be scanned (a static array, or on the
 *   allocating thread's stack; thread-local storage is not scanned).
 *   Pointer-free objects keep GC_MALLOC_ATOMIC: a pointer-free free list is
 *   linked through words the collector does not scan.
 * The heap limit comes from the environment (GC_MAXIMUM_HEAP_SIZE, and
 * GC_INITIAL_HEAP_SIZE set by the suite to the same value so that Boehm has
 * the memory Mosaic is given, not only a cap). */
#ifndef MOSAIC_BENCH_BOEHM_H
#define MOSAIC_BENCH_BOEHM_H
#define GC_THREADS
#include <gc.h>
#include <gc/gc_inline.h>
#include "common.h"

/* One thread's tiny free lists for BOEHM_NEW. */
typedef void *BoehmFreeLists[GC_TINY_FREELISTS];
/* Allocates BYTES (a constant, so the size class is found at compile time)
 * of cleared, scanned memory into RESULT from FL. */
#define BOEHM_NEW(result, bytes, fl) \
    GC_MALLOC_WORDS(result, ((bytes) + sizeof(void *) - 1) / sizeof(void *), fl)

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
    const char *interior = getenv("BOEHM_INTERIOR_POINTERS");
    if (!interior || !*interior || *interior == '0') GC_set_all_interior_pointers(0);
    GC_INIT();
    GC_start_mark_threads();
    GC_set_on_collection_event(on_gc_event);
}
static void boehm_result_ns(unsigned long long check, double ns_per_alloc) {
    print_result_ns(check, (long)GC_get_gc_no(), gc_total_ns / 1e6, ns_per_alloc);
}
static inline void boehm_result(unsigned long long check) { boehm_result_ns(check, -1); }
#endif
