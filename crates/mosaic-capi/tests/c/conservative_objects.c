/* Conservatively scanned heap objects through the C API: a buffer whose
 * trace hands every word to mosaic_visit_ambiguous_range keeps alive, and
 * in place, every object one of its words points into (interior pointers
 * included), across collections that move everything movable; cleared
 * words let the objects go. Garbage values are ignored. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"

enum { CELL = 1, BUFFER = 2, WORDS = 64 };

typedef struct Cell {
    uint64_t tag; /* CELL */
    struct Cell *ref;
    uint64_t id;
} Cell;

typedef struct Buffer {
    uint64_t tag; /* BUFFER */
    uintptr_t words[WORDS];
} Buffer;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    if (*(uint64_t *)obj == CELL) {
        mosaic_visit(t, (void **)&((Cell *)obj)->ref);
    } else if (*(uint64_t *)obj == BUFFER) {
        Buffer *b = obj;
        mosaic_visit_ambiguous_range(t, &b->words[0], &b->words[WORDS]);
    }
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    c.compact = MOSAIC_COMPACT_ALWAYS; /* every collection moves what it may */
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(h);

    Buffer *b = mosaic_alloc(m, sizeof(Buffer), 0);
    b->tag = BUFFER;
    mosaic_root *rb = mosaic_root_new(m, b);
    Cell *cells[WORDS];
    mosaic_weak *weak[WORDS];
    for (int i = 0; i < WORDS; i++) {
        cells[i] = mosaic_alloc(m, sizeof(Cell), 0);
        cells[i]->tag = CELL;
        cells[i]->id = 1000 + (uint64_t)i;
        weak[i] = mosaic_weak_new(m, cells[i], MOSAIC_WEAK_SHORT);
        for (int g = 0; g < 7; g++) ((Cell *)mosaic_alloc(m, sizeof(Cell), 0))->tag = CELL; /* garbage */
        b = mosaic_root_get(rb);
        /* Interior pointers for most; the start for every 8th; garbage in 3. */
        b->words[i] = i % 8 == 0 ? (uintptr_t)cells[i] : (uintptr_t)cells[i] + 8 + (uintptr_t)(i % 16);
    }
    b->words[WORDS - 1] = 0xdeadbeef;
    b->words[WORDS - 2] = UINTPTR_MAX;
    b->words[WORDS - 3] = 42;
    for (int round = 0; round < 3; round++) {
        for (int j = 0; j < 20000; j++) ((Cell *)mosaic_alloc(m, sizeof(Cell), 0))->tag = CELL;
        mosaic_collect(m);
        for (int i = 0; i < WORDS - 3; i++) {
            CHECK(mosaic_weak_get(weak[i]) == cells[i], "round %d: cell %d moved or died", round, i);
            CHECK(mosaic_is_object(h, cells[i]) && cells[i]->id == 1000 + (uint64_t)i, "round %d: cell %d", round, i);
        }
    }
    /* Cleared words let the cells go. */
    b = mosaic_root_get(rb);
    for (int i = 0; i < WORDS; i++) b->words[i] = 0;
    mosaic_collect(m);
    for (int i = 0; i < WORDS - 3; i++) CHECK(mosaic_weak_get(weak[i]) == NULL, "cell %d kept after its word was cleared", i);
    for (int i = 0; i < WORDS; i++) mosaic_weak_free(weak[i]);
    mosaic_root_free(rb);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
