/* Blocking regions entered and left by hand: while a thread is inside
 * mosaic_blocking_enter .. mosaic_blocking_leave, another thread collects
 * without waiting for it, its root handles still count and may be set, and
 * its own mutator refuses to allocate, collect, sweep, run finalizers or
 * push scope slots (MOSAIC_ERR_MISUSE); entering twice and leaving without
 * entering are errors; after leaving, everything works again. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

#define EXPECT_MISUSE(what)                                                                          \
    CHECK(mosaic_last_error() == MOSAIC_ERR_MISUSE, "%s: error %d (%s)", what, (int)mosaic_last_error(), \
          mosaic_last_error_message())

static mosaic_heap *heap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int blocked, collected;
static Obj *second; /* allocated by main, stored by the worker while blocked */

static void wait_for(int *flag) {
    pthread_mutex_lock(&lock);
    while (!*flag) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

static void raise_flag(int *flag) {
    pthread_mutex_lock(&lock);
    *flag = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void *worker(void *arg) {
    mosaic_root **out = arg;
    mosaic_mutator *m = mosaic_mutator_new(heap);
    Obj *x = mosaic_alloc(m, sizeof(Obj), 0);
    x->id = 7;
    mosaic_root *r = mosaic_root_new(m, x);
    mosaic_root *r2 = mosaic_root_new(m, NULL);
    out[0] = r;
    out[1] = r2;

    CHECK(mosaic_blocking_leave(m) == MOSAIC_ERR_MISUSE, "leave without enter");
    EXPECT_MISUSE("leave without enter");
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK && mosaic_last_error() == MOSAIC_OK, "enter");
    CHECK(mosaic_blocking_enter(m) == MOSAIC_ERR_MISUSE, "enter twice");
    EXPECT_MISUSE("enter twice");
    CHECK(mosaic_alloc(m, 16, 0) == NULL, "allocated while blocked");
    EXPECT_MISUSE("mosaic_alloc");
    CHECK(mosaic_alloc_aligned(m, 16, 64, 0) == NULL, "allocated (aligned) while blocked");
    EXPECT_MISUSE("mosaic_alloc_aligned");
    mosaic_collect(m);
    EXPECT_MISUSE("mosaic_collect");
    mosaic_finish_sweep(m);
    EXPECT_MISUSE("mosaic_finish_sweep");
    CHECK(mosaic_run_finalizers(m) == 0, "run_finalizers");
    EXPECT_MISUSE("mosaic_run_finalizers");
    void *local = NULL;
    size_t depth = mosaic_scope_open(m);
    CHECK(mosaic_scope_add(m, &local) == MOSAIC_ERR_MISUSE, "scope_add while blocked");
    CHECK(mosaic_scope_close(m, depth) == MOSAIC_ERR_MISUSE, "scope_close while blocked");
    CHECK(mosaic_ephemeron_new(m, NULL, NULL) == NULL, "ephemeron while blocked");
    EXPECT_MISUSE("mosaic_ephemeron_new");
    mosaic_safepoint(m); /* a no-op here */
    CHECK(mosaic_last_error() == MOSAIC_OK, "safepoint while blocked");

    raise_flag(&blocked);
    wait_for(&collected);
    /* Root handles may be used inside the region. */
    mosaic_root_set(r2, second);
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK && mosaic_last_error() == MOSAIC_OK, "leave");
    CHECK(mosaic_blocking_leave(m) == MOSAIC_ERR_MISUSE, "leave twice");

    CHECK(((Obj *)mosaic_root_get(r))->id == 7, "rooted object survived the collections");
    Obj *y = mosaic_alloc(m, sizeof(Obj), 0);
    CHECK(y != NULL && mosaic_last_error() == MOSAIC_OK, "allocation works after leaving");
    mosaic_collect(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "collect works after leaving");
    CHECK(((Obj *)mosaic_root_get(r2))->id == 8, "the root set inside the region holds");
    mosaic_mutator_free(m);
    return NULL;
}

static void join(void *t) { pthread_join(*(pthread_t *)t, NULL); }

int main(void) {
    alarm(60); /* a collection waiting for the blocked thread would hang */
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    heap = mosaic_heap_new(&c, &e);
    CHECK(heap != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(heap);

    mosaic_root *worker_roots[2];
    pthread_t t;
    pthread_create(&t, NULL, worker, worker_roots);
    /* Wait inside a region of our own, entered by hand too. */
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "main enter");
    wait_for(&blocked);
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "main leave");

    /* The worker is blocked: collections do not wait for it. */
    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    uint64_t before = st.collections;
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 20000; j++) mosaic_alloc(m, sizeof(Obj), 0);
        mosaic_collect(m);
    }
    mosaic_heap_stats(heap, &st);
    CHECK(st.collections >= before + 5, "collections %llu", (unsigned long long)st.collections);
    CHECK(st.last_marked == 1, "the blocked thread's root is marked: %llu", (unsigned long long)st.last_marked);
    second = mosaic_alloc(m, sizeof(Obj), 0);
    second->id = 8;
    mosaic_root *keep = mosaic_root_new(m, second); /* until the worker holds it */
    raise_flag(&collected);
    mosaic_blocking(m, join, &t);
    mosaic_root_free(keep);
    mosaic_collect(m);
    mosaic_heap_stats(heap, &st);
    CHECK(st.last_marked == 2, "the worker's roots outlive it: %llu", (unsigned long long)st.last_marked);
    mosaic_root_free(worker_roots[0]);
    mosaic_root_free(worker_roots[1]);

    /* mosaic_blocking inside a region entered by hand just runs f. */
    int flag = 0;
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "enter");
    mosaic_blocking(m, (void (*)(void *))raise_flag, &flag);
    CHECK(flag == 1 && mosaic_last_error() == MOSAIC_OK, "nested mosaic_blocking");
    /* Freeing a mutator inside its region leaves the region first. */
    mosaic_mutator_free(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "free inside a region: %s", mosaic_last_error_message());
    mosaic_heap_free(heap);
    printf("%d failures\n", failures);
    return failures != 0;
}
