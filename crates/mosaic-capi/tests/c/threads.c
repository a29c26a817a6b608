/* Mutators and threads (issue 6, item 6): a second mutator of the same heap
 * on one thread is refused; a thread that exits without freeing its mutator
 * has it detached, so later collections do not hang, and the leaked mutator
 * can still be freed afterwards from another thread. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"


typedef struct Cell {
    struct Cell *next;
    uint64_t value;
} Cell;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Cell *)obj)->next);
}

static mosaic_heap *heap;

/* Allocates, keeps one cell in a root, then exits without freeing anything. */
static void *leaky_thread(void *arg) {
    mosaic_mutator *m = mosaic_mutator_new(heap);
    CHECK(m != NULL, "mutator: %s", mosaic_last_error_message());
    Cell *c = mosaic_alloc(m, sizeof(Cell), 0);
    c->value = 42;
    mosaic_root *r = mosaic_root_new(m, c);
    for (int i = 0; i < 10000; i++) mosaic_alloc(m, sizeof(Cell), 0);
    ((void **)arg)[0] = m;
    ((void **)arg)[1] = r;
    return NULL;
}

static void join_thread(void *t) { pthread_join(*(pthread_t *)t, NULL); }

int main(void) {
    mosaic_embedder e = {.trace = trace};
    mosaic_config c;
    CHECK(mosaic_config_from_env(&c) == MOSAIC_OK, "config: %s", mosaic_last_error_message());
    c.max_heap = 64u << 20;
    c.initial_slots = 256;
    heap = mosaic_heap_new(&c, &e);
    CHECK(heap != NULL, "heap: %s", mosaic_last_error_message());

    mosaic_mutator *m = mosaic_mutator_new(heap);
    CHECK(m != NULL, "first mutator: %s", mosaic_last_error_message());
    mosaic_mutator *again = mosaic_mutator_new(heap);
    CHECK(again == NULL, "a second mutator of the same heap on one thread was accepted");
    CHECK(mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT, "error %d", (int)mosaic_last_error());
    CHECK(strstr(mosaic_last_error_message(), "already has a mutator of this heap") != NULL, "message: %s",
          mosaic_last_error_message());

    /* The main thread's mutator stays attached while it waits in
     * pthread_join: wrap the join in a blocking region, as documented. */
    void *leaked[2] = {NULL, NULL};
    pthread_t t;
    pthread_create(&t, NULL, leaky_thread, leaked);
    mosaic_blocking(m, join_thread, &t);

    /* The exited thread's mutator does not hold up collections. */
    for (int i = 0; i < 5; i++) mosaic_collect(m);
    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    CHECK(st.last_marked == 1, "last_marked %llu (the leaked thread's root)", (unsigned long long)st.last_marked);
    Cell *kept = mosaic_root_get(leaked[1]);
    CHECK(kept && kept->value == 42, "the leaked thread's root is intact");

    /* Freed later from this thread: allowed once its thread has exited. */
    mosaic_root_free(leaked[1]);
    mosaic_mutator_free(leaked[0]);
    CHECK(mosaic_last_error() == MOSAIC_OK, "freeing the orphan: %s", mosaic_last_error_message());
    mosaic_collect(m);
    mosaic_heap_stats(heap, &st);
    CHECK(st.last_marked == 0, "last_marked %llu", (unsigned long long)st.last_marked);

    mosaic_mutator_free(m);
    mosaic_heap_free(heap);
    printf("%d failures\n", failures);
    return failures != 0;
}
