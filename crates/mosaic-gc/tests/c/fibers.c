/* What a runtime with fibers (Crystal, on bdwgc) does, and needs to work:
 * - its push-other-roots procedure allocates during a collection (Crystal
 *   creates its fiber list on first use, inside the first collection):
 *   the objects it gets are usable and survive (bdwgc 8.2.2 hands them out
 *   too, but frees the last one in the same collection: its contents are
 *   gone after the next allocation of that size);
 * - the main thread runs on a fiber stack of its own (makecontext) after
 *   writing GC_stackbottom, bdwgc's data object for the main thread's
 *   stack: objects only that stack holds survive collections made there;
 * - a suspended fiber's stack is pushed by the procedure
 *   (GC_push_all_eager) and keeps what it holds;
 * - a registered thread runs on a fiber stack, and the procedure moves
 *   that thread's stack bottom there (GC_set_stackbottom with the handle
 *   GC_get_my_stackbottom gave): the collection scans the fiber stack it
 *   named, not from the fiber up to the thread's own stack;
 * - the main thread switches between two fibers thousands of times while
 *   another thread collects back to back, the parked fiber's stack pushed
 *   by the procedure: each collection sees the GC_stackbottom of the fiber
 *   the main thread is stopped on. As in Crystal's multi-threaded runtime,
 *   a switch holds a reader lock that the start callback takes as a writer
 *   and the procedure releases (no collection starts mid-switch).
 * Each line of the report ends in "ok". */
#define GC_THREADS
#include <gc.h>
#include <gc_mark.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

/* GC_stackbottom is deprecated in gc.h, and written all the same by
 * programs built for bdwgc (Crystal binds the symbol itself). */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define FIBER_STACK (256 * 1024)
#ifndef DURING
#define DURING 5
#endif

struct node {
    struct node *next;
    long value;
};

/* ---- allocation inside the procedure ---- */

static struct node *during; /* a static root: what the procedure made */
static long during_count, during_null;

/* ---- fibers of the main thread ---- */

static char *main_bottom;             /* GC_stackbottom before any switch */
static char *parked_lo, *parked_hi;   /* a suspended fiber's stack to push */

/* ---- a thread on a fiber ---- */

static void *thread_handle;
static char *thread_own_bottom;
static char *volatile thread_fiber_top; /* 0: the thread is on its own stack */

/* Crystal's RWLock: atomics, so the writer may unlock from another thread. */
static atomic_int rw_writer, rw_readers, rw_held;

static void read_lock(void) {
    for (;;) {
        while (atomic_load(&rw_writer)) sched_yield();
        atomic_fetch_add(&rw_readers, 1);
        if (!atomic_load(&rw_writer)) return;
        atomic_fetch_sub(&rw_readers, 1);
    }
}
static void read_unlock(void) { atomic_fetch_sub(&rw_readers, 1); }

static void start_callback(void) { /* the collector, before it stops anyone */
    int free_ = 0;
    while (!atomic_compare_exchange_weak(&rw_writer, &free_, 1)) {
        free_ = 0;
        sched_yield();
    }
    while (atomic_load(&rw_readers)) sched_yield();
    atomic_store(&rw_held, 1);
}
static void release_writer(void) { /* from the procedure */
    if (atomic_exchange(&rw_held, 0)) atomic_store(&rw_writer, 0);
}

static char *main_lo; /* the main stack, pushed while fibers run */

static GC_push_other_roots_proc previous;

static void push_other_roots(void) {
    /* One node per collection for the first DURING collections, as
     * Crystal makes its fiber list on first use. (Guarded: under bdwgc an
     * allocation here can start a nested collection.) */
    static int busy;
    if (!busy && during_count < DURING) {
        busy = 1;
        struct node *n = GC_MALLOC(sizeof *n);
        if (n) {
            n->value = during_count++;
            n->next = during;
            during = n;
        } else {
            during_null++;
        }
        busy = 0;
    }
    if (parked_lo) GC_push_all_eager(parked_lo, parked_hi);
    if (main_lo) GC_push_all_eager(main_lo, main_bottom);
    release_writer();
    if (thread_handle) {
        struct GC_stack_base sb = {0};
        sb.mem_base = thread_fiber_top ? thread_fiber_top : thread_own_bottom;
        GC_set_stackbottom(thread_handle, &sb);
    }
    /* bdwgc's default procedure pushes the thread stacks. */
    if (previous) previous();
}

static struct node *make_list(long n, long seed) {
    struct node *l = 0;
    for (long i = 0; i < n; i++) {
        struct node *x = GC_MALLOC(sizeof *x);
        if (!x) abort();
        x->value = seed + i;
        x->next = l;
        l = x;
    }
    return l;
}

static int list_ok(struct node *l, long n, long seed) {
    for (long i = n - 1; i >= 0; i--, l = l->next)
        if (!l || l->value != seed + i) return 0;
    return l == 0;
}

static void churn(int rounds) {
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 20000; i++) (void)GC_MALLOC(32 + (i % 8) * 16);
        GC_gcollect();
    }
}

static void *fiber_stack(void) {
    void *s = mmap(0, FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) abort();
    return s;
}

/* Main-thread fibers: A runs, parks (B runs, collects), resumes. */
static ucontext_t main_ctx, a_ctx, b_ctx;
static char *a_stack, *b_stack;
static int a_result, b_result;

static void switch_to(ucontext_t *from, ucontext_t *to, char *to_bottom) {
    GC_stackbottom = to_bottom; /* as Crystal does before every switch */
    swapcontext(from, to);
}

static void fiber_b(void) {
    /* Only this stack holds `mine`; A's list is on A's parked stack. */
    struct node *volatile mine = make_list(5000, 7000);
    churn(10);
    b_result = list_ok(mine, 5000, 7000);
    parked_lo = 0;
    switch_to(&b_ctx, &a_ctx, a_stack + FIBER_STACK);
}

static void fiber_a(void) {
    struct node *volatile mine = make_list(5000, 1000);
    churn(5);
    int before = list_ok(mine, 5000, 1000);
    /* Park: the procedure pushes this stack from here up. */
    char here;
    parked_lo = (char *)(((unsigned long)&here - 4096) & ~15UL);
    parked_hi = a_stack + FIBER_STACK;
    switch_to(&a_ctx, &b_ctx, b_stack + FIBER_STACK);
    churn(5);
    a_result = before && list_ok(mine, 5000, 1000);
    switch_to(&a_ctx, &main_ctx, main_bottom);
}

/* A registered thread on a fiber. */
static ucontext_t t_own_ctx, t_fiber_ctx;
static char *t_stack;
static volatile int t_ready, t_stop, t_result;

static void thread_fiber(void) {
    struct node *volatile mine = make_list(3000, 500);
    t_ready = 1;
    int ok = 1;
    while (!t_stop) {
        for (int i = 0; i < 1000; i++) (void)GC_MALLOC(48);
        ok &= list_ok(mine, 3000, 500);
    }
    t_result = ok && list_ok(mine, 3000, 500);
    swapcontext(&t_fiber_ctx, &t_own_ctx);
}

static void *thread_main(void *arg) {
    (void)arg;
    struct GC_stack_base sb;
    void *h = GC_get_my_stackbottom(&sb);
    thread_own_bottom = sb.mem_base;
    t_stack = fiber_stack();
    getcontext(&t_fiber_ctx);
    t_fiber_ctx.uc_stack.ss_sp = t_stack;
    t_fiber_ctx.uc_stack.ss_size = FIBER_STACK;
    t_fiber_ctx.uc_link = 0;
    makecontext(&t_fiber_ctx, thread_fiber, 0);
    /* Named before the switch; no collection can start meanwhile (the
     * main thread waits for t_ready and nothing else allocates). */
    thread_fiber_top = t_stack + FIBER_STACK;
    thread_handle = h;
    swapcontext(&t_own_ctx, &t_fiber_ctx);
    thread_fiber_top = 0;
    thread_handle = 0;
    return 0;
}

/* Ping-pong between two fibers of the main thread under collections. */
static ucontext_t p_ctx[2];
static char *p_stack[2];
static volatile int p_stop, p_ok = 1;
static volatile long p_switches;

static void ping_pong(int me) {
    read_unlock(); /* taken by the switch that started this fiber */
    /* Only this fiber's stack holds its list. */
    struct node *volatile mine = make_list(300, 100000 * (me + 1));
    for (;;) {
        for (int i = 0; i < 50; i++) (void)GC_MALLOC(24);
        if (!list_ok(mine, 300, 100000 * (me + 1))) p_ok = 0;
        if (++p_switches >= 20000) p_stop = 1;
        if (p_stop) break;
        read_lock();
        char here;
        parked_lo = (char *)(((unsigned long)&here - 4096) & ~15UL);
        parked_hi = p_stack[me] + FIBER_STACK;
        switch_to(&p_ctx[me], &p_ctx[1 - me], p_stack[1 - me] + FIBER_STACK);
        read_unlock(); /* taken by the other fiber's switch */
    }
    parked_lo = 0;
    read_lock();
    switch_to(&p_ctx[me], &main_ctx, main_bottom);
}
static void ping(void) { ping_pong(0); }
static void pong(void) { ping_pong(1); }

static void *collect_loop(void *arg) {
    (void)arg;
    while (!p_stop) GC_gcollect();
    return 0;
}

int main(void) {
    GC_INIT();
    previous = GC_get_push_other_roots();
    GC_set_push_other_roots(push_other_roots);

    /* 1. Allocation inside the procedure. */
    churn(20);
    int ok = during_count == DURING && during_null == 0;
    long expect = DURING - 1;
    for (struct node *n = during; n; n = n->next, expect--)
        if (n->value != expect) ok = 0;
    printf("objects allocated by the push-other-roots procedure are kept (%ld, %ld refused): %s\n",
           during_count, during_null, ok && expect == -1 ? "ok" : "FAILED");

    /* 2, 3. Fibers of the main thread. */
    main_bottom = GC_stackbottom;
    a_stack = fiber_stack();
    b_stack = fiber_stack();
    getcontext(&a_ctx);
    a_ctx.uc_stack.ss_sp = a_stack;
    a_ctx.uc_stack.ss_size = FIBER_STACK;
    makecontext(&a_ctx, fiber_a, 0);
    getcontext(&b_ctx);
    b_ctx.uc_stack.ss_sp = b_stack;
    b_ctx.uc_stack.ss_size = FIBER_STACK;
    makecontext(&b_ctx, fiber_b, 0);
    switch_to(&main_ctx, &a_ctx, a_stack + FIBER_STACK);
    printf("the main thread's fiber keeps what its stack holds (GC_stackbottom moved): %s\n",
           b_result ? "ok" : "FAILED");
    printf("a parked fiber's stack pushed with GC_push_all_eager keeps its objects: %s\n",
           a_result ? "ok" : "FAILED");
    printf("GC_stackbottom is back at the main stack: %s\n",
           GC_stackbottom == main_bottom ? "ok" : "FAILED");
    churn(3);

    /* 4. A thread on a fiber, its stack bottom set by the procedure. */
    pthread_t t;
    if (pthread_create(&t, 0, thread_main, 0) != 0) abort();
    while (!t_ready) sched_yield();
    churn(30);
    t_stop = 1;
    pthread_join(t, 0);
    printf("a thread's fiber stack, named by GC_set_stackbottom in the procedure, is scanned: %s\n",
           t_result ? "ok" : "FAILED");

    /* 5. Fiber switches on the main thread racing collections. */
    void (*entry[2])(void) = {ping, pong};
    for (int k = 0; k < 2; k++) {
        p_stack[k] = fiber_stack();
        getcontext(&p_ctx[k]);
        p_ctx[k].uc_stack.ss_sp = p_stack[k];
        p_ctx[k].uc_stack.ss_size = FIBER_STACK;
        makecontext(&p_ctx[k], entry[k], 0);
    }
    GC_set_start_callback(start_callback);
    pthread_t c;
    if (pthread_create(&c, 0, collect_loop, 0) != 0) abort();
    /* After 20000 switches the fiber running sets p_stop and returns to
     * main (the other stays parked, its list garbage); the collecting
     * thread then ends. */
    struct node *volatile before = make_list(10, 5);
    p_switches = 0;
    char here;
    read_lock();
    main_lo = (char *)(((unsigned long)&here - 4096) & ~15UL);
    switch_to(&main_ctx, &p_ctx[0], p_stack[0] + FIBER_STACK);
    read_unlock();
    main_lo = 0;
    printf("20000 fiber switches under back-to-back collections keep both fibers' lists (%s): %s\n",
           p_switches >= 20000 ? "enough switches" : "too few switches",
           p_ok && p_switches >= 20000 && list_ok(before, 10, 5) ? "ok" : "FAILED");
    pthread_join(c, 0);
    GC_set_start_callback(0);
    return 0;
}
