/* What a finalizer costs: N list nodes (16 bytes: next, id), each given a
 * finalizer, on Mosaic's C API or on the Boehm collector
 * (GC_register_finalizer_no_order). Prints the registration loop's time per
 * finalizer, the resident memory it added per finalizer (VmRSS after the
 * loop minus before it: the tables outside the heap), and, after the list
 * is dropped and collected, how many finalizers ran (must be N).
 *   cc -O2 finalizer_cost.c -DUSE_MOSAIC $(pkg-config --cflags --libs mosaic) -o fc_mosaic
 *   cc -O2 finalizer_cost.c -lgc -o fc_boehm
 *   ./fc_mosaic [N]   ./fc_boehm [N]      (N = 781000 by default) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common.h"

typedef struct Node { struct Node *next; uintptr_t id; } Node;
static long ran;


#ifdef USE_MOSAIC
#include "mosaic.h"
static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Node *)obj)->next);
}
static void roots(void *ctx, mosaic_tracer *t) { (void)ctx; (void)t; }
static void fin(mosaic_mutator *m, void *obj, void *data) { (void)m; (void)obj; (void)data; ran++; }
#else
#include <gc.h>
static void fin(void *obj, void *data) { (void)obj; (void)data; ran++; }
#endif

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 781000;
    Node *head = NULL;
#ifdef USE_MOSAIC
    mosaic_embedder e = {0};
    e.trace = trace;
    e.roots = roots;
    mosaic_heap *h = mosaic_heap_new(NULL, &e);
    mosaic_mutator *m = mosaic_mutator_new(h);
    size_t depth = mosaic_scope_open(m);
    mosaic_scope_add(m, (void **)&head);
    for (long i = 0; i < n; i++) {
        Node *x = mosaic_alloc(m, sizeof(Node), 0);
        x->next = head;
        x->id = (uintptr_t)i;
        head = x;
    }
#else
    GC_INIT();
    for (long i = 0; i < n; i++) {
        Node *x = GC_MALLOC(sizeof(Node));
        x->next = head;
        x->id = (uintptr_t)i;
        head = x;
    }
#endif
    long before = rss_kb();
    double t0 = now_ns();
    for (Node *x = head; x; x = x->next) {
#ifdef USE_MOSAIC
        if (mosaic_register_finalizer(m, x, fin, NULL, MOSAIC_FINALIZE_UNORDERED) != MOSAIC_OK) return 1;
#else
        GC_register_finalizer_no_order(x, fin, NULL, NULL, NULL);
#endif
    }
    double ns = (now_ns() - t0) / n;
    long after = rss_kb();
    head = NULL;
#ifdef USE_MOSAIC
    mosaic_collect(m);
    mosaic_run_finalizers(m);
    mosaic_scope_close(m, depth);
#else
    GC_gcollect();
    GC_invoke_finalizers();
#endif
    printf("RESULT {\"check\": %ld, \"ns_per_register\": %.1f, \"bytes_per_finalizer\": %.1f}\n", ran == n ? 1L : 0L, ns,
           (after - before) * 1024.0 / n);
    return ran == n ? 0 : 1;
}
