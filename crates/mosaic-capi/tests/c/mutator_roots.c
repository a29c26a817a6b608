/* Per-mutator roots: at each collection the embedder's mutator_roots runs
 * once for every mutator not freed (running, blocked, or orphaned by its
 * exited thread; twice in verify mode, whose walk scans the roots again),
 * with that mutator's handle and the pointer it set with
 * mosaic_mutator_set_data; the slots it reports keep their objects alive;
 * a freed mutator is no longer reported. Every collection here runs on two
 * GC workers (parallel_min_live 0), so the calls may come from either. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

/* Root scans per collection: verify mode scans the roots a second time. */
enum { SCANS = 2 };

/* A thread's "interpreter stack". */
typedef struct Stack {
    void *slots[8];
    int n;
} Stack;

/* What mutator_roots saw (on any GC worker, world stopped: under a lock). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
enum { MAX_SEEN = 256 };
static struct {
    mosaic_mutator *m;
    void *data;
} seen[MAX_SEEN];
static int nseen;
static int ctx_ok = 1;
static int marker;

static void mutator_roots(void *ctx, mosaic_mutator *m, void *data, mosaic_tracer *t) {
    pthread_mutex_lock(&seen_lock);
    if (ctx != &marker) ctx_ok = 0;
    if (nseen < MAX_SEEN) {
        seen[nseen].m = m;
        seen[nseen].data = data;
        nseen++;
    }
    pthread_mutex_unlock(&seen_lock);
    Stack *s = data;
    if (s)
        for (int i = 0; i < s->n; i++) mosaic_visit(t, &s->slots[i]);
}

/* How many times (m, data) was seen since the log was reset. */
static int times_seen(mosaic_mutator *m, void *data) {
    int k = 0;
    for (int i = 0; i < nseen; i++) k += seen[i].m == m && seen[i].data == data;
    return k;
}

static mosaic_heap *heap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready, done;

typedef struct Worker {
    uint64_t first_id;
    int set_data;
    Stack stack;
    mosaic_mutator *m;
} Worker;

static void wait_for(void *arg) {
    int *flag = arg;
    pthread_mutex_lock(&lock);
    while (!*flag) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

static void signal_flag(int *flag, int add) {
    pthread_mutex_lock(&lock);
    *flag += add;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Keeps three objects only in its stack, blocks until main has collected. */
static void *worker(void *arg) {
    Worker *w = arg;
    mosaic_mutator *m = w->m = mosaic_mutator_new(heap);
    CHECK(m != NULL, "worker mutator: %s", mosaic_last_error_message());
    if (w->set_data) {
        CHECK(mosaic_mutator_set_data(m, &w->stack) == MOSAIC_OK, "set_data");
        CHECK(mosaic_mutator_data(m) == &w->stack && mosaic_last_error() == MOSAIC_OK, "data");
    }
    for (int i = 0; i < 3; i++) {
        Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
        o->id = w->first_id + i;
        w->stack.slots[w->stack.n++] = o;
    }
    signal_flag(&ready, 1);
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "enter");
    wait_for(&done);
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "leave");
    for (int i = 0; i < 3 && w->set_data; i++) {
        Obj *o = w->stack.slots[i];
        CHECK(o->id == w->first_id + (uint64_t)i, "worker object %d", i);
    }
    mosaic_mutator_free(m);
    return NULL;
}

/* Sets its data, fills its (static) stack and exits without freeing. */
static Worker orphan = {.first_id = 300, .set_data = 1};

static void *orphan_thread(void *arg) {
    (void)arg;
    orphan.m = mosaic_mutator_new(heap);
    mosaic_mutator_set_data(orphan.m, &orphan.stack);
    Obj *o = mosaic_alloc(orphan.m, sizeof(Obj), 0);
    o->id = 300;
    orphan.stack.slots[orphan.stack.n++] = o;
    return NULL;
}

static void join(void *t) { pthread_join(*(pthread_t *)t, NULL); }

static uint64_t marked(void) {
    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    return st.last_marked;
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace_obj, .ctx = &marker, .mutator_roots = mutator_roots};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    c.gc_threads = 2;
    c.parallel_min_live = 0;
    heap = mosaic_heap_new(&c, &e);
    CHECK(heap != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(heap);
    CHECK(mosaic_mutator_data(m) == NULL && mosaic_last_error() == MOSAIC_OK, "no data at first");

    Stack mine = {.n = 1};
    Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
    o->id = 1;
    mine.slots[0] = o;
    CHECK(mosaic_mutator_set_data(m, &mine) == MOSAIC_OK, "set_data");
    CHECK(mosaic_mutator_data(m) == &mine, "data");

    /* Two workers: one with data, one without. */
    Worker w1 = {.first_id = 100, .set_data = 1}, w2 = {.first_id = 200, .set_data = 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, &w1);
    pthread_create(&t2, NULL, worker, &w2);
    mosaic_blocking(m, wait_for, &ready); /* ready >= 1 */
    while (1) {
        pthread_mutex_lock(&lock);
        int r = ready;
        pthread_mutex_unlock(&lock);
        if (r == 2) break;
        mosaic_blocking(m, wait_for, &ready);
    }

    nseen = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20000; i++) mosaic_alloc(m, sizeof(Obj), 0);
        mosaic_collect(m);
    }
    int collections = 3;
    CHECK(ctx_ok, "mutator_roots ctx");
    CHECK(times_seen(m, &mine) >= collections, "main mutator seen %d times", times_seen(m, &mine));
    CHECK(times_seen(w1.m, &w1.stack) >= collections, "worker 1 seen %d times", times_seen(w1.m, &w1.stack));
    CHECK(times_seen(w2.m, NULL) >= collections, "worker 2 seen %d times (without data)", times_seen(w2.m, NULL));
    CHECK(nseen == times_seen(m, &mine) + times_seen(w1.m, &w1.stack) + times_seen(w2.m, NULL),
          "unexpected mutators reported (%d calls)", nseen);
    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    CHECK((int)st.collections * 3 * SCANS == nseen, "once per mutator and scan: %d calls, %llu collections",
          nseen, (unsigned long long)st.collections);
    /* Main's object and worker 1's three survive; worker 2 reported none. */
    CHECK(marked() == 4, "marked %llu", (unsigned long long)marked());
    CHECK(((Obj *)mine.slots[0])->id == 1, "main's object intact");

    signal_flag(&done, 1);
    mosaic_blocking(m, join, &t1);
    mosaic_blocking(m, join, &t2);

    /* Freed mutators are not reported; an orphan is, and keeps its roots. */
    pthread_t t3;
    pthread_create(&t3, NULL, orphan_thread, NULL);
    mosaic_blocking(m, join, &t3);
    nseen = 0;
    mosaic_collect(m);
    CHECK(nseen == 2 * SCANS && times_seen(m, &mine) == SCANS && times_seen(orphan.m, &orphan.stack) == SCANS,
          "after the workers: %d calls", nseen);
    CHECK(marked() == 2 && ((Obj *)orphan.stack.slots[0])->id == 300, "the orphan's object survives");
    mosaic_mutator_free(orphan.m);
    nseen = 0;
    mosaic_collect(m);
    CHECK(nseen == SCANS && times_seen(m, &mine) == SCANS, "after freeing the orphan: %d calls", nseen);
    CHECK(marked() == 1, "marked %llu", (unsigned long long)marked());

    /* Clearing the data: reported with NULL, the object goes. */
    CHECK(mosaic_mutator_set_data(m, NULL) == MOSAIC_OK, "clear data");
    nseen = 0;
    mosaic_collect(m);
    CHECK(nseen == SCANS && times_seen(m, NULL) == SCANS && marked() == 0, "data cleared");

    mosaic_mutator_free(m);
    mosaic_heap_free(heap);
    printf("%d failures\n", failures);
    return failures != 0;
}
