/* mosaic_free: a freed cell's memory is the next allocation of its size,
 * cleared; a freed large object's pages come back to the heap; a rooted
 * list allocated among the frees keeps every value across collections;
 * a double free, a foreign pointer, NULL and a free inside a blocking
 * region are errors that lose nothing. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

typedef Obj Cell; /* ref: the next cell, id: its value */

static mosaic_embedder embedder = {.trace = trace_obj};

int main(void) {
    mosaic_heap *h = verified_heap(&embedder);
    mosaic_mutator *m = mosaic_mutator_new(h);
    mosaic_root *list = mosaic_root_new(m, NULL);
    enum { N = 20000 };
    for (uint64_t i = 0; i < N; i++) {
        Cell *c = mosaic_alloc(m, sizeof(Cell), 0);
        c->ref = mosaic_root_get(list);
        c->id = i;
        mosaic_root_set(list, c);
        /* A temporary of the same size, freed at once: the memory goes to
         * a later allocation, never to two at once. */
        Cell *tmp = mosaic_alloc(m, sizeof(Cell), 0);
        tmp->ref = c;
        tmp->id = ~i;
        bool now = false;
        CHECK(mosaic_free(m, tmp, &now) == MOSAIC_OK && now, "free %llu: %s", (unsigned long long)i,
              mosaic_last_error_message());
        if (i == 0) {
            CHECK(mosaic_free(m, tmp, NULL) == MOSAIC_ERR_MISUSE, "double free");
            EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_free");
        }
        if (i % 5000 == 4999) mosaic_collect(m);
    }
    uint64_t want = N;
    for (Cell *c = mosaic_root_get(list); c; c = c->ref) {
        want--;
        CHECK(c->id == want, "cell holds %llu, expected %llu", (unsigned long long)c->id,
              (unsigned long long)want);
        if (c->id != want) break;
    }
    CHECK(want == 0, "%llu cells missing", (unsigned long long)want);

    /* Reuse: the slot freed last is handed out again, cleared. */
    Cell *a = mosaic_alloc(m, sizeof(Cell), 0);
    a->id = 77;
    CHECK(mosaic_free(m, a, NULL) == MOSAIC_OK, "free a");
    int reused = 0;
    for (int i = 0; i < 5000 && !reused; i++) {
        Cell *b = mosaic_alloc(m, sizeof(Cell), 0);
        if (b == a) {
            reused = 1;
            CHECK(b->ref == NULL && b->id == 0, "reused slot not cleared");
        }
    }
    CHECK(reused, "the freed slot was not reused");

    /* A large object's pages go back at once. */
    mosaic_stats s;
    mosaic_heap_stats(h, &s);
    size_t large_before = s.large_objects;
    void *big = mosaic_alloc(m, 1 << 20, MOSAIC_NO_POINTERS);
    bool now = false;
    CHECK(mosaic_free(m, big, &now) == MOSAIC_OK && now, "free big: %s", mosaic_last_error_message());
    mosaic_heap_stats(h, &s);
    CHECK(s.large_objects == large_before, "large objects %zu, expected %zu", s.large_objects, large_before);
    CHECK(mosaic_free(m, big, NULL) == MOSAIC_ERR_FOREIGN_POINTER, "free of freed large object");

    /* Bad input. */
    uint64_t local[4] = {0};
    CHECK(mosaic_free(m, local, NULL) == MOSAIC_ERR_FOREIGN_POINTER, "foreign pointer");
    EXPECT_ERROR(MOSAIC_ERR_FOREIGN_POINTER, "mosaic_free");
    CHECK(mosaic_free(m, NULL, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "NULL");
    CHECK(mosaic_free(NULL, a, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "NULL mutator");
    Cell *head = mosaic_root_get(list);
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "blocking");
    CHECK(mosaic_free(m, head, NULL) == MOSAIC_ERR_MISUSE, "free inside a blocking region");
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "leave");
    mosaic_collect(m);
    CHECK(((Cell *)mosaic_root_get(list))->id == N - 1, "list head intact");

    /* A collection that releases gives every free page back: after 8 MiB
     * of garbage, less stays committed than after a plain collection,
     * and the list survives it. */
    for (int i = 0; i < 8 << 20; i += 1 << 12) mosaic_alloc(m, 1 << 12, MOSAIC_NO_POINTERS);
    mosaic_collect(m);
    mosaic_heap_stats(h, &s);
    size_t kept = s.committed_bytes;
    mosaic_collect_and_release(m);
    mosaic_heap_stats(h, &s);
    CHECK(s.committed_bytes < kept, "committed %zu after releasing, %zu before", s.committed_bytes, kept);
    CHECK(mosaic_last_error() == MOSAIC_OK, "collect_and_release: %s", mosaic_last_error_message());
    CHECK(((Cell *)mosaic_root_get(list))->id == N - 1, "list head intact after releasing");
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "blocking");
    mosaic_collect_and_release(m);
    EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_collect_and_release");
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "leave");

    mosaic_root_free(list);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
