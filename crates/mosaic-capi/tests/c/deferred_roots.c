/* A large root range handed over with mosaic_defer_ambiguous_range (the
 * program's own static table, which nothing writes during a pause): every
 * object one of its words points into (interior pointers included) stays
 * alive with its contents, on one GC worker and on two (where the range
 * is queued in pieces and shared out), and exactly those: the table's
 * other words (zeros, odd numbers, addresses outside the heap) keep
 * nothing, and objects it stopped pointing to go. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

/* 48,000 words (375 KiB): many chunks of the marker's 4 KiB. */
enum { WORDS = 48000, OBJECTS = 6000 };
static uintptr_t table[WORDS];
static char outside[64];

static void roots(void *ctx, mosaic_tracer *t) {
    (void)ctx;
    mosaic_defer_ambiguous_range(t, &table[0], &table[WORDS]);
}

/* The table slot of object i: spread over the whole table. */
static size_t slot_of(size_t i) { return (i * 7919) % WORDS; }

static void run(size_t gc_threads) {
    mosaic_embedder e = {.trace = trace_obj, .roots = roots};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    c.gc_threads = gc_threads;
    c.parallel_min_live = 0;
    mosaic_heap *heap = mosaic_heap_new(&c, &e);
    CHECK(heap != NULL, "heap: %s", mosaic_last_error_message());
    if (!heap) return;
    mosaic_mutator *m = mosaic_mutator_new(heap);
    for (size_t w = 0; w < WORDS; w++)
        table[w] = w % 3 == 0 ? 0 : w % 3 == 1 ? (uintptr_t)(2 * w + 1) : (uintptr_t)&outside[w % 64];
    for (size_t i = 0; i < OBJECTS; i++) {
        Obj *o = new_obj(m, 1000 + i);
        /* Every other object through an interior pointer. */
        table[slot_of(i)] = (uintptr_t)o + (i % 2 ? 8 : 0);
        new_obj(m, 1); /* garbage beside it */
    }
    for (int round = 0; round < 3; round++) {
        mosaic_collect(m);
        mosaic_stats s;
        CHECK(mosaic_heap_stats(heap, &s) == MOSAIC_OK, "stats");
        size_t want = OBJECTS - (size_t)round * (OBJECTS / 4);
        CHECK(s.last_marked == want, "%zu workers, round %d: marked %llu, expected %zu", gc_threads,
              round, (unsigned long long)s.last_marked, want);
        size_t bad = 0;
        for (size_t i = 0; i < want; i++) {
            Obj *o = (Obj *)(table[slot_of(i)] & ~(uintptr_t)15);
            bad += !mosaic_is_object(heap, o) || o->id != 1000 + i || o->ref != NULL;
        }
        CHECK(bad == 0, "%zu workers, round %d: %zu objects lost or changed", gc_threads, round, bad);
        /* The last quarter still held goes. */
        for (size_t i = want - OBJECTS / 4; i < want; i++) table[slot_of(i)] = 0;
    }
    mosaic_mutator_free(m);
    mosaic_heap_free(heap);
}

int main(void) {
    alarm(120);
    run(1);
    run(2);
    printf("%d failures\n", failures);
    return failures != 0;
}
