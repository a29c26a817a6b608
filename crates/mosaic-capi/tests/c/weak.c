/* Weak handles and weak slots: cleared exactly when their target dies;
 * short ones as soon as the target is unreachable, long ones only once a
 * finalizable target is reclaimed; slot registrations end with their
 * holder or when unregistered; pointers outside the heap are left alone. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"

/* `ref` is traced; `weak` is not (it is registered as a weak slot). */
typedef struct Obj {
    struct Obj *ref;
    void *weak;
    uint64_t id;
    uint64_t pad;
} Obj;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Obj *)obj)->ref);
}

static Obj *new_obj(mosaic_mutator *m, uint64_t id) {
    Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
    CHECK(o != NULL, "alloc: %s", mosaic_last_error_message());
    o->id = id;
    return o;
}

static int finalized;
static void fin(mosaic_mutator *m, void *obj, void *data) {
    (void)m;
    (void)data;
    CHECK(((Obj *)obj)->id == 3, "finalized object %llu", (unsigned long long)((Obj *)obj)->id);
    finalized++;
}

static void handles(mosaic_heap *h, mosaic_mutator *m) {
    Obj *a = new_obj(m, 1);
    mosaic_root *ra = mosaic_root_new(m, a);
    mosaic_weak *ws = mosaic_weak_new(m, a, MOSAIC_WEAK_SHORT);
    mosaic_weak *wl = mosaic_weak_new(m, a, MOSAIC_WEAK_LONG);
    CHECK(ws && wl && mosaic_last_error() == MOSAIC_OK, "weak_new: %s", mosaic_last_error_message());
    /* Weak handles do not keep their target: a lone weak target dies. */
    Obj *lone = new_obj(m, 2);
    mosaic_weak *wlone = mosaic_weak_new(m, lone, MOSAIC_WEAK_SHORT);
    CHECK(mosaic_weak_get(wlone) == lone, "before any collection");
    for (int i = 0; i < 3; i++) {
        mosaic_collect(m);
        CHECK(mosaic_weak_get(ws) == a && mosaic_weak_get(wl) == a, "reachable target cleared (round %d)", i);
        CHECK(mosaic_last_error() == MOSAIC_OK, "weak_get error");
        CHECK(a->id == 1, "target intact");
    }
    CHECK(mosaic_weak_get(wlone) == NULL && mosaic_last_error() == MOSAIC_OK, "lone target kept by its weak handle");
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 1, "only a is marked: %llu", (unsigned long long)st.last_marked);
    mosaic_root_free(ra);
    mosaic_collect(m);
    CHECK(mosaic_weak_get(ws) == NULL && mosaic_weak_get(wl) == NULL, "dead target not cleared");
    mosaic_weak_free(ws);
    mosaic_weak_free(wl);
    mosaic_weak_free(wlone);
    CHECK(mosaic_last_error() == MOSAIC_OK, "weak_free");

    /* A finalizable target: the short handle is cleared when it becomes
     * unreachable, the long one only when it is reclaimed. */
    Obj *f = new_obj(m, 3);
    CHECK(mosaic_register_finalizer(m, f, fin, NULL, MOSAIC_FINALIZE_ORDERED) == MOSAIC_OK, "register");
    ws = mosaic_weak_new(m, f, MOSAIC_WEAK_SHORT);
    wl = mosaic_weak_new(m, f, MOSAIC_WEAK_LONG);
    mosaic_collect(m);
    CHECK(mosaic_weak_get(ws) == NULL, "short: cleared once unreachable");
    CHECK(mosaic_weak_get(wl) == f, "long: kept while the finalizer is pending");
    CHECK(mosaic_run_finalizers(m) == 1 && finalized == 1, "finalizer ran");
    CHECK(mosaic_weak_get(wl) == f, "long: kept until the next collection");
    mosaic_collect(m);
    CHECK(mosaic_weak_get(wl) == NULL, "long: cleared when reclaimed");
    mosaic_weak_free(ws);
    mosaic_weak_free(wl);
}

static Obj outside = {.id = 99}; /* not a heap object */

static void slots(mosaic_heap *h, mosaic_mutator *m) {
    (void)h;
    Obj *holder = new_obj(m, 10);
    mosaic_root *rh = mosaic_root_new(m, holder);
    Obj *t = new_obj(m, 11);
    mosaic_root *rt = mosaic_root_new(m, t);
    holder->weak = t;
    CHECK(mosaic_register_weak_slot(m, &holder->weak, MOSAIC_WEAK_SHORT) == MOSAIC_OK, "register: %s",
          mosaic_last_error_message());
    mosaic_collect(m);
    CHECK(holder->weak == t, "slot cleared while its target lives");
    mosaic_root_free(rt);
    mosaic_collect(m);
    CHECK(holder->weak == NULL, "slot not cleared when its target died");

    /* Retargeted slots follow their new target; outside pointers stay. */
    holder->weak = &outside;
    mosaic_collect(m);
    CHECK(holder->weak == &outside, "pointer outside the heap cleared");
    Obj *u = new_obj(m, 12);
    holder->weak = u;
    holder->ref = u; /* reachable through a traced field */
    mosaic_collect(m);
    CHECK(holder->weak == u, "slot of a reachable target cleared");
    holder->ref = NULL;
    mosaic_collect(m);
    CHECK(holder->weak == NULL, "retargeted slot not cleared");

    /* Unregistered: left alone. */
    CHECK(mosaic_unregister_weak_slot(m, &holder->weak) && mosaic_last_error() == MOSAIC_OK, "unregister");
    CHECK(!mosaic_unregister_weak_slot(m, &holder->weak) && mosaic_last_error() == MOSAIC_OK, "unregister twice");
    Obj *v = new_obj(m, 13);
    holder->weak = v;
    mosaic_collect(m);
    CHECK(holder->weak == v, "unregistered slot cleared");
    holder->weak = NULL;

    /* Long slot with a finalizable target. */
    Obj *f = new_obj(m, 3);
    CHECK(mosaic_register_finalizer(m, f, fin, NULL, MOSAIC_FINALIZE_UNORDERED) == MOSAIC_OK, "register");
    Obj *holder2 = new_obj(m, 14);
    holder->ref = holder2;
    holder->weak = f;
    holder2->weak = f;
    CHECK(mosaic_register_weak_slot(m, &holder->weak, MOSAIC_WEAK_SHORT) == MOSAIC_OK, "short slot");
    CHECK(mosaic_register_weak_slot(m, &holder2->weak, MOSAIC_WEAK_LONG) == MOSAIC_OK, "long slot");
    mosaic_collect(m);
    CHECK(holder->weak == NULL && holder2->weak == f, "short cleared, long kept: %p %p", holder->weak,
          holder2->weak);
    CHECK(mosaic_run_finalizers(m) == 1 && finalized == 2, "finalizer ran");
    mosaic_collect(m);
    CHECK(holder2->weak == NULL, "long slot cleared when reclaimed");

    /* A registration ends with its holder. */
    holder2->weak = holder;
    holder->ref = NULL; /* holder2 dies */
    mosaic_collect(m);
    CHECK(!mosaic_unregister_weak_slot(m, &holder2->weak), "registration outlived its holder");
    CHECK(mosaic_unregister_weak_slot(m, &holder->weak), "holder's own registration");
    mosaic_root_free(rh);
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace};
    mosaic_heap *h = verified_heap(&e);
    mosaic_mutator *m = mosaic_mutator_new(h);
    handles(h, m);
    slots(h, m);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
