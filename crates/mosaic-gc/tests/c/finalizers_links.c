/* Finalizers and disappearing links with bdwgc's return values: the old
 * finalizer is returned, fn = 0 unregisters, finalizers run outside the
 * pause on the next allocation (or on demand), short links are cleared
 * before finalizers, long ones only when the object is reclaimed, links
 * move, and GC_call_with_alloc_lock reads a hidden link consistently. */
#include <gc.h>
#include <stdio.h>

static int finalized[8];
static void fin(void *obj, void *cd) { (void)obj; finalized[(long)cd]++; }
static void fin2(void *obj, void *cd) { (void)obj; finalized[(long)cd] += 100; }

#define LINKS 100
static GC_hidden_pointer hidden[LINKS];
/* How many links are set, read under the allocation lock (no collection
 * can clear a link meanwhile). */
static void *count_links(void *unused) {
    (void)unused;
    long n = 0;
    for (int i = 0; i < LINKS; i++) n += hidden[i] != 0;
    return (void *)n;
}

static void *keep;

static void make(void) {
    /* Objects made in a separate frame, so no stale stack word keeps them. */
    void *a = GC_MALLOC(64), *b = GC_MALLOC(64), *c = GC_MALLOC(64);
    GC_finalization_proc ofn = (GC_finalization_proc)1;
    void *ocd = (void *)1;
    GC_REGISTER_FINALIZER(a, fin, (void *)1, &ofn, &ocd);
    int first_ok = ofn == 0 && ocd == 0;
    GC_REGISTER_FINALIZER(a, fin2, (void *)2, &ofn, &ocd);
    int replace_ok = ofn == fin && ocd == (void *)1;
    GC_REGISTER_FINALIZER(b, fin, (void *)3, 0, 0);
    GC_REGISTER_FINALIZER(b, 0, 0, &ofn, &ocd); /* unregister */
    int unreg_ok = ofn == fin && ocd == (void *)3;
    printf("registering returns the previous finalizer: %s\n",
           first_ok && replace_ok && unreg_ok ? "ok" : "WRONG");
    hidden[0] = GC_HIDE_POINTER(c);
    int r1 = GC_GENERAL_REGISTER_DISAPPEARING_LINK((void **)&hidden[0], c);
    int r2 = GC_GENERAL_REGISTER_DISAPPEARING_LINK((void **)&hidden[0], c);
    printf("link registered, duplicate refused: %s\n", r1 == GC_SUCCESS && r2 == GC_DUPLICATE ? "ok" : "WRONG");
    for (int i = 1; i < LINKS; i++) {
        void *o = GC_MALLOC(48);
        hidden[i] = GC_HIDE_POINTER(o);
        GC_GENERAL_REGISTER_DISAPPEARING_LINK((void **)&hidden[i], o);
    }
    keep = GC_MALLOC(16);
}

static void *clobber(int n) {
    volatile char buf[4096];
    for (int i = 0; i < (int)sizeof buf; i++) buf[i] = 0;
    return n ? clobber(n - 1) : (void *)buf;
}

int main(void) {
    GC_INIT();
    GC_set_finalize_on_demand(1);
    make();
    long before = (long)GC_call_with_alloc_lock(count_links, NULL);
    clobber(8);
    for (int i = 0; i < 4; i++) GC_gcollect();
    int pending = GC_should_invoke_finalizers();
    int ran = GC_invoke_finalizers();
    printf("finalizers wait for GC_invoke_finalizers: %s\n", pending && ran >= 1 ? "ok" : "WRONG");
    printf("the replaced finalizer ran once, the removed one never: %s\n",
           finalized[2] == 100 && finalized[1] == 0 && finalized[3] == 0 ? "ok" : "WRONG");
    long after = (long)GC_call_with_alloc_lock(count_links, NULL);
    /* A stale word on the stack may keep one or two alive. */
    int cleared = before == LINKS && after <= LINKS / 10;
    printf("links were cleared when their objects died: %s\n", cleared ? "ok" : "WRONG");
    int unreg_ok = 1;
    for (int i = 0; i < LINKS; i++)
        if (hidden[i] == 0 && GC_unregister_disappearing_link((void **)&hidden[i]) != 0) unreg_ok = 0;
    printf("a cleared link is no longer registered: %s\n", unreg_ok ? "ok" : "WRONG");
    /* Moves: a live object's link moves to a new slot. */
    static GC_hidden_pointer slot1, slot2;
    slot1 = GC_HIDE_POINTER(keep);
    GC_GENERAL_REGISTER_DISAPPEARING_LINK((void **)&slot1, keep);
    int m1 = GC_move_disappearing_link((void **)&slot1, (void **)&slot2);
    int m2 = GC_move_disappearing_link((void **)&slot1, (void **)&slot2);
    printf("moving a link: %s\n", m1 == GC_SUCCESS && m2 == GC_NOT_FOUND ? "ok" : "WRONG");
    return !(finalized[2] == 100 && cleared && unreg_ok && m1 == GC_SUCCESS && m2 == GC_NOT_FOUND);
}
