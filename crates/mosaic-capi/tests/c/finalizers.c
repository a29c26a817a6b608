/* Finalizers: each unreachable object's finalizer runs exactly once, with
 * its data pointer and the running thread's mutator, never for a reachable
 * object; ordered finalization of A -> B takes two collections, unordered
 * one; unregistering; resurrection; finalizers that allocate and collect;
 * the notifier (which may not allocate); the finalizer thread. */
#define _POSIX_C_SOURCE 200809L
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

typedef struct Record {
    int runs;
    void *obj;
    uint64_t id;
    uint64_t ref_id; /* id of the object obj->ref, when it ran */
    mosaic_mutator *m;
    pthread_t thread;
} Record;

static void fin(mosaic_mutator *m, void *obj, void *data) {
    Record *r = data;
    Obj *o = obj;
    r->runs++;
    r->obj = obj;
    r->id = o->id;
    r->ref_id = o->ref ? o->ref->id : 0;
    r->m = m;
    r->thread = pthread_self();
}

static void reg(mosaic_mutator *m, void *obj, Record *r, mosaic_finalizer_order order) {
    mosaic_error e = mosaic_register_finalizer(m, obj, fin, r, order);
    CHECK(e == MOSAIC_OK && mosaic_last_error() == MOSAIC_OK, "register: %d %s", (int)e,
          mosaic_last_error_message());
}

enum { N = 100 };
static Record rec[N];

/* Half the objects reachable: only the other half is finalized, once. */
static void unreachable_ones_once(mosaic_heap *h, mosaic_mutator *m) {
    Obj *objs[N];
    mosaic_root *roots[N];
    memset(rec, 0, sizeof rec);
    for (int i = 0; i < N; i++) {
        objs[i] = new_obj(m, i + 1);
        reg(m, objs[i], &rec[i], MOSAIC_FINALIZE_UNORDERED);
        roots[i] = i % 2 == 0 ? mosaic_root_new(m, objs[i]) : NULL;
    }
    mosaic_collect(m);
    CHECK(mosaic_pending_finalizers(h) == N / 2, "pending %zu", mosaic_pending_finalizers(h));
    CHECK(mosaic_last_error() == MOSAIC_OK, "pending_finalizers error");
    for (int i = 0; i < N; i++) CHECK(rec[i].runs == 0, "ran inside the collection");
    size_t ran = mosaic_run_finalizers(m);
    CHECK(ran == N / 2 && mosaic_last_error() == MOSAIC_OK, "ran %zu", ran);
    CHECK(mosaic_pending_finalizers(h) == 0, "pending after run");
    for (int i = 0; i < N; i++) {
        if (i % 2 == 0) {
            CHECK(rec[i].runs == 0, "reachable object %d finalized", i);
        } else {
            CHECK(rec[i].runs == 1, "object %d ran %d times", i, rec[i].runs);
            CHECK(rec[i].obj == objs[i] && rec[i].id == (uint64_t)i + 1, "object %d: wrong object or data", i);
            CHECK(rec[i].m == m, "object %d: finalizer got mutator %p, not %p", i, (void *)rec[i].m, (void *)m);
            CHECK(pthread_equal(rec[i].thread, pthread_self()), "object %d: ran on another thread", i);
        }
    }
    /* Nothing more until the roots go. */
    mosaic_collect(m);
    mosaic_collect(m);
    CHECK(mosaic_run_finalizers(m) == 0, "finalized again");
    for (int i = 0; i < N; i++) mosaic_root_free(roots[i]);
    mosaic_collect(m);
    CHECK(mosaic_run_finalizers(m) == N / 2, "the other half");
    for (int i = 0; i < N; i++) CHECK(rec[i].runs == 1, "object %d ran %d times", i, rec[i].runs);
    mosaic_collect(m);
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 0, "finalized objects reclaimed: %llu marked", (unsigned long long)st.last_marked);
}

/* A -> B: ordered finalizes A first, B in a later collection (intact for
 * A's finalizer); unordered finalizes both at once. */
static void ordered_and_unordered(mosaic_heap *h, mosaic_mutator *m) {
    Record ra = {0}, rb = {0};
    Obj *a = new_obj(m, 1), *b = new_obj(m, 2);
    a->ref = b;
    reg(m, a, &ra, MOSAIC_FINALIZE_ORDERED);
    reg(m, b, &rb, MOSAIC_FINALIZE_ORDERED);
    mosaic_collect(m);
    CHECK(mosaic_pending_finalizers(h) == 1, "ordered: pending %zu", mosaic_pending_finalizers(h));
    CHECK(mosaic_run_finalizers(m) == 1, "ordered: first run");
    CHECK(ra.runs == 1 && rb.runs == 0, "ordered: A first (%d, %d)", ra.runs, rb.runs);
    CHECK(ra.ref_id == 2, "ordered: B intact for A's finalizer (%llu)", (unsigned long long)ra.ref_id);
    mosaic_collect(m);
    CHECK(mosaic_run_finalizers(m) == 1, "ordered: second run");
    CHECK(ra.runs == 1 && rb.runs == 1 && rb.obj == b, "ordered: then B (%d, %d)", ra.runs, rb.runs);
    mosaic_collect(m);
    CHECK(mosaic_run_finalizers(m) == 0, "ordered: done");

    Record ua = {0}, ub = {0};
    a = new_obj(m, 3);
    b = new_obj(m, 4);
    a->ref = b;
    b->ref = a; /* a cycle: unordered finalizes it too */
    reg(m, a, &ua, MOSAIC_FINALIZE_UNORDERED);
    reg(m, b, &ub, MOSAIC_FINALIZE_UNORDERED);
    mosaic_collect(m);
    CHECK(mosaic_run_finalizers(m) == 2, "unordered: both at once");
    CHECK(ua.runs == 1 && ub.runs == 1 && ua.ref_id == 4 && ub.ref_id == 3, "unordered: (%d, %d)", ua.runs,
          ub.runs);
}

static void unregister(mosaic_heap *h, mosaic_mutator *m) {
    Record r = {0};
    Obj *o = new_obj(m, 5);
    mosaic_finalizer_fn gf = NULL;
    void *gd = NULL;
    CHECK(!mosaic_finalizer_of(m, o, &gf, &gd) && mosaic_last_error() == MOSAIC_OK && gf == NULL,
          "finalizer_of before registering");
    reg(m, o, &r, MOSAIC_FINALIZE_ORDERED);
    CHECK(mosaic_finalizer_of(m, o, &gf, &gd) && gf == fin && gd == &r, "finalizer_of: %p %p",
          (void *)gf, gd);
    CHECK(mosaic_finalizer_of(m, o, NULL, NULL), "finalizer_of with NULL outs");
    CHECK(!mosaic_finalizer_of(m, &r, &gf, &gd) && mosaic_last_error() == MOSAIC_OK, "finalizer_of a foreign pointer");
    CHECK(!mosaic_finalizer_of(NULL, o, &gf, &gd) && mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT,
          "finalizer_of without a mutator");
    CHECK(mosaic_unregister_finalizer(m, o) && mosaic_last_error() == MOSAIC_OK, "unregister");
    CHECK(!mosaic_finalizer_of(m, o, NULL, NULL), "finalizer_of after unregistering");
    CHECK(!mosaic_unregister_finalizer(m, o) && mosaic_last_error() == MOSAIC_OK, "unregister again: %s",
          mosaic_last_error_message());
    /* A second registration is allowed once the first is gone. */
    reg(m, o, &r, MOSAIC_FINALIZE_ORDERED);
    CHECK(mosaic_unregister_finalizer(m, o), "unregister the second");
    mosaic_collect(m);
    CHECK(mosaic_pending_finalizers(h) == 0 && mosaic_run_finalizers(m) == 0 && r.runs == 0,
          "unregistered object finalized");
}

/* The shared finalizer: one function for many objects, each finding its
 * record by its id; its data is the records' array. */
enum { NS = 300 };
static Record shared_rec[NS];

static void fin_shared(mosaic_mutator *m, void *obj, void *data) {
    Record *recs = data;
    Obj *o = obj;
    CHECK(o->id >= 1000 && o->id < 1000 + NS, "shared finalizer: id %llu", (unsigned long long)o->id);
    if (o->id < 1000 || o->id >= 1000 + NS) return;
    Record *r = &recs[o->id - 1000];
    r->runs++;
    r->obj = obj;
    r->id = o->id;
    r->m = m;
}

static void shared(mosaic_heap *h, mosaic_mutator *m) {
    Obj *probe = new_obj(m, 1);
    CHECK(mosaic_register_shared_finalizer(m, probe, MOSAIC_FINALIZE_ORDERED) == MOSAIC_ERR_MISUSE,
          "shared registration before the function is set: %d", (int)mosaic_last_error());
    CHECK(mosaic_set_shared_finalizer(h, NULL, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "NULL shared finalizer");
    CHECK(mosaic_set_shared_finalizer(h, fin_shared, shared_rec) == MOSAIC_OK, "set: %s",
          mosaic_last_error_message());
    memset(shared_rec, 0, sizeof shared_rec);
    mosaic_root *roots[NS];
    for (int i = 0; i < NS; i++) {
        Obj *o = new_obj(m, 1000 + i);
        mosaic_finalizer_order order = i % 2 ? MOSAIC_FINALIZE_UNORDERED : MOSAIC_FINALIZE_ORDERED;
        CHECK(mosaic_register_shared_finalizer(m, o, order) == MOSAIC_OK, "register shared %d: %s", i,
              mosaic_last_error_message());
        roots[i] = i % 3 == 0 ? mosaic_root_new(m, o) : NULL;
        if (i == 7) {
            CHECK(mosaic_register_shared_finalizer(m, o, order) == MOSAIC_ERR_ALREADY_REGISTERED, "twice: %d",
                  (int)mosaic_last_error());
            CHECK(mosaic_register_finalizer(m, o, fin, &rec[0], order) == MOSAIC_ERR_ALREADY_REGISTERED,
                  "a plain one on a shared one: %d", (int)mosaic_last_error());
        }
        if (i == 7) CHECK(!mosaic_finalizer_of(m, o, NULL, NULL), "finalizer_of a shared one");
        if (i == 8) CHECK(mosaic_unregister_finalizer(m, o), "unregister a shared one");
    }
    CHECK(mosaic_register_shared_finalizer(m, probe, 7) == MOSAIC_ERR_INVALID_ARGUMENT, "unknown order");
    mosaic_collect(m);
    mosaic_run_finalizers(m);
    for (int i = 0; i < NS; i++) {
        int want = (i % 3 != 0 && i != 8) ? 1 : 0;
        CHECK(shared_rec[i].runs == want, "shared %d ran %d times, want %d", i, shared_rec[i].runs, want);
        if (want) CHECK(shared_rec[i].m == m, "shared %d: its mutator", i);
    }
    for (int i = 0; i < NS; i++)
        if (roots[i]) mosaic_root_free(roots[i]);
    mosaic_collect(m);
    mosaic_run_finalizers(m);
    for (int i = 0; i < NS; i++) {
        int want = i != 8 ? 1 : 0;
        CHECK(shared_rec[i].runs == want, "shared %d ran %d times in all, want %d", i, shared_rec[i].runs, want);
    }
}

/* A finalizer that allocates through its mutator and resurrects its object. */
static mosaic_root *keep;
static int resurrected;

static void fin_resurrect(mosaic_mutator *m, void *obj, void *data) {
    (void)data;
    Obj *o = obj;
    Obj *fresh = mosaic_alloc(m, sizeof(Obj), 0);
    CHECK(fresh != NULL, "allocating in a finalizer: %s", mosaic_last_error_message());
    fresh->id = 77;
    o->ref = fresh;
    mosaic_root_set(keep, o);
    resurrected++;
}

/* A finalizer that collects: what that collection queues runs in the same
 * mosaic_run_finalizers call. */
static mosaic_root *release;

static void fin_collect(mosaic_mutator *m, void *obj, void *data) {
    fin(m, obj, data);
    mosaic_root_set(release, NULL);
    mosaic_collect(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "collecting in a finalizer: %s", mosaic_last_error_message());
}

static void resurrection_and_reentry(mosaic_heap *h, mosaic_mutator *m) {
    keep = mosaic_root_new(m, NULL);
    Obj *o = new_obj(m, 6);
    CHECK(mosaic_register_finalizer(m, o, fin_resurrect, NULL, MOSAIC_FINALIZE_ORDERED) == MOSAIC_OK, "register");
    mosaic_collect(m);
    CHECK(mosaic_run_finalizers(m) == 1 && resurrected == 1, "resurrecting finalizer ran");
    for (int i = 0; i < 3; i++) {
        mosaic_collect(m);
        CHECK(mosaic_run_finalizers(m) == 0, "a resurrected object is not finalized again");
    }
    Obj *back = mosaic_root_get(keep);
    CHECK(back == o && back->id == 6 && back->ref && back->ref->id == 77, "resurrected object intact");
    mosaic_root_set(keep, NULL);
    mosaic_collect(m);
    CHECK(mosaic_pending_finalizers(h) == 0 && resurrected == 1, "finalizers run once");
    mosaic_root_free(keep);

    Record rx = {0}, ry = {0};
    Obj *x = new_obj(m, 8), *y = new_obj(m, 9);
    release = mosaic_root_new(m, y);
    CHECK(mosaic_register_finalizer(m, x, fin_collect, &rx, MOSAIC_FINALIZE_UNORDERED) == MOSAIC_OK, "register x");
    reg(m, y, &ry, MOSAIC_FINALIZE_UNORDERED);
    mosaic_collect(m);
    CHECK(mosaic_pending_finalizers(h) == 1, "only x queued");
    size_t ran = mosaic_run_finalizers(m);
    CHECK(ran == 2 && rx.runs == 1 && ry.runs == 1 && ry.id == 9, "queued by a finalizer's collection: ran %zu",
          ran);
    mosaic_root_free(release);
}

/* The notifier: called once finalizers are queued, refused allocation. */
static atomic_int notified;
static mosaic_mutator *main_m;
static void *notifier_alloc = (void *)1;
static mosaic_error notifier_error;

static void notify(void *ctx) {
    atomic_fetch_add(&notified, 1);
    CHECK(ctx == &notified, "notifier ctx");
    notifier_alloc = mosaic_alloc(main_m, 16, 0);
    notifier_error = mosaic_last_error();
}

static void notifier(mosaic_heap *h, mosaic_mutator *m) {
    CHECK(mosaic_set_finalizer_notifier(h, notify, &notified) == MOSAIC_OK, "set notifier");
    mosaic_collect(m);
    CHECK(atomic_load(&notified) == 0, "notified with nothing queued");
    Record r = {0};
    reg(m, new_obj(m, 10), &r, MOSAIC_FINALIZE_ORDERED);
    mosaic_collect(m);
    CHECK(atomic_load(&notified) == 1, "notified %d times", atomic_load(&notified));
    CHECK(notifier_alloc == NULL && notifier_error == MOSAIC_ERR_MISUSE, "allocating in the notifier: %p %d",
          notifier_alloc, (int)notifier_error);
    CHECK(mosaic_alloc(m, 16, 0) != NULL, "allocation works after the notifier");
    CHECK(mosaic_run_finalizers(m) == 1 && r.runs == 1, "ran");
    CHECK(mosaic_set_finalizer_notifier(h, NULL, NULL) == MOSAIC_OK, "remove notifier");
    reg(m, new_obj(m, 11), &r, MOSAIC_FINALIZE_ORDERED);
    mosaic_collect(m);
    CHECK(atomic_load(&notified) == 1, "notified after removal");
    CHECK(mosaic_run_finalizers(m) == 1 && r.runs == 2, "ran");
}

/* The finalizer thread runs them with a mutator of its own. */
enum { T = 50 };
static Record trec[T];
static atomic_int thread_runs;

static void fin_thread(mosaic_mutator *m, void *obj, void *data) {
    fin(m, obj, data);
    void *p = mosaic_alloc(m, 64, 0);
    CHECK(p != NULL, "allocating on the finalizer thread: %s", mosaic_last_error_message());
    atomic_fetch_add(&thread_runs, 1);
}

static void finalizer_thread(void) {
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    mosaic_mutator *m = mosaic_mutator_new(h);
    CHECK(mosaic_start_finalizer_thread(h) == MOSAIC_OK, "start: %s", mosaic_last_error_message());
    for (int i = 0; i < T; i++) {
        Obj *o = new_obj(m, 100 + i);
        CHECK(mosaic_register_finalizer(m, o, fin_thread, &trec[i], MOSAIC_FINALIZE_UNORDERED) == MOSAIC_OK,
              "register");
    }
    mosaic_collect(m);
    /* Wait in a blocking region: the finalizer thread may collect. */
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "enter");
    for (int i = 0; i < 10000 && atomic_load(&thread_runs) < T; i++) nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "leave");
    CHECK(atomic_load(&thread_runs) == T, "the finalizer thread ran %d of %d", atomic_load(&thread_runs), T);
    for (int i = 0; i < T; i++) {
        CHECK(trec[i].runs == 1 && trec[i].id == (uint64_t)(100 + i), "thread finalizer %d", i);
        CHECK(trec[i].m != NULL && trec[i].m != m, "thread finalizer %d: mutator %p", i, (void *)trec[i].m);
        CHECK(!pthread_equal(trec[i].thread, pthread_self()), "thread finalizer %d ran on the main thread", i);
    }
    CHECK(mosaic_run_finalizers(m) == 0, "nothing left for the main thread");
    CHECK(mosaic_start_finalizer_thread(h) == MOSAIC_ERR_MISUSE, "started twice: %d", (int)mosaic_last_error());
    mosaic_mutator_free(m);
    mosaic_heap_free(h); /* the idle thread does not keep the heap */
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_heap *h = verified_heap(&e);
    mosaic_mutator *m = main_m = mosaic_mutator_new(h);

    unreachable_ones_once(h, m);
    ordered_and_unordered(h, m);
    unregister(h, m);
    shared(h, m);
    resurrection_and_reentry(h, m);
    notifier(h, m);
    finalizer_thread();

    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
