/* Finalizers on the Boehm collector, the steps of Mosaic's worker
 * (src/workloads/refs.rs, `--only finalizers`): N list nodes (16 bytes:
 * next, id) allocated into a list held by a root (a static, which the
 * collector scans); a timed loop gives every node a finalizer
 * (GC_register_finalizer_no_order, a function that increments a counter,
 * no client data); the list is dropped, GC_gcollect and
 * GC_invoke_finalizers run (again, up to 10 rounds, until every finalizer
 * ran). Configured by boehm.h (no interior pointers, parallel markers).
 * Prints TIME (the whole body: allocation, registration, collection,
 * finalizers) and
 *   RESULT {"check": 1 if all N ran, "n", "ran", "ns_per_register",
 *           "rss_bytes_per_item": VmRSS after the loop minus before, over N,
 *           "collections"}
 * and exits 1 if not every finalizer ran.
 * usage: finalizers [N]   (N = 781000 by default) */
#include "boehm.h"

typedef struct Node {
    struct Node *next;
    uintptr_t id;
} Node;

static Node *head; /* the root */
static long ran;

static void fin(void *obj, void *data) {
    (void)obj;
    (void)data;
    ran++;
}

/* Separate, not inlined: their locals (pointers to nodes) are dead, and
 * their stack frames overwritten, before the collection that must find
 * every node unreachable. */
static __attribute__((noinline)) void build(long n) {
    for (long i = 0; i < n; i++) {
        Node *x = GC_MALLOC(sizeof(Node));
        x->next = head;
        x->id = (uintptr_t)i;
        head = x;
    }
}

static __attribute__((noinline)) void register_all(void) {
    for (Node *x = head; x; x = x->next) GC_register_finalizer_no_order(x, fin, NULL, NULL, NULL);
}

/* Overwrites the stack below the caller with zeroes (stale node pointers
 * there would keep nodes alive: the collector scans the stack
 * conservatively). */
static __attribute__((noinline)) void clear_stack(void) {
    volatile char buf[16384];
    memset((char *)buf, 0, sizeof buf);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 781000;
    boehm_init();
    double start = now_ns();
    build(n);
    long before = rss_kb();
    double t0 = now_ns();
    register_all();
    double ns = n > 0 ? (now_ns() - t0) / n : 0;
    long after = rss_kb();
    head = NULL;
    clear_stack();
    for (int round = 0; round < 10 && ran < n; round++) {
        GC_gcollect();
        GC_invoke_finalizers();
    }
    printf("TIME %.3f\n", (now_ns() - start) / 1e6);
    int ok = ran == n;
    printf("RESULT {\"check\": %d, \"n\": %ld, \"ran\": %ld, \"ns_per_register\": %.2f, \"rss_bytes_per_item\": %.2f, "
           "\"collections\": %lu}\n",
           ok, n, ran, ns, n > 0 ? (after - before) * 1024.0 / n : 0.0, (unsigned long)GC_get_gc_no());
    if (!ok) fprintf(stderr, "check failed: %ld of %ld finalizers ran\n", ran, n);
    return ok ? 0 : 1;
}
