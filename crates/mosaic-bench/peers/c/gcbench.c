/* GCBench (Ellis, Kovac, Boehm) on the Boehm collector, the same algorithm
 * as crates/mosaic-bench/src/workloads/gcbench.rs.
 * usage: gcbench HOLES THREADS [STRETCH LONG_LIVED ARRAY_SIZE MIN_DEPTH MAX_DEPTH]
 * (defaults: the published 18 16 500000 4 16; heap limit: GC_MAXIMUM_HEAP_SIZE).
 * Prints TIME: from starting the threads to joining them (GC_INIT before).
 * Built twice: nodes from GC_MALLOC, or (-DBOEHM_INLINE) from gc_inline.h's
 * inline free lists, one array per thread on its stack (boehm.h).
 * With -DUSE_MOSAIC the same code runs on Mosaic's C API (mosaic_c.h). */
#include <pthread.h>
#include <string.h>
#ifdef USE_MOSAIC
#include "mosaic_c.h" /* the same program on Mosaic's C API */
#else
#include "boehm.h"
#define mc_thread_start() ((void)0)
#define mc_thread_end() ((void)0)
#endif

typedef struct Node {
    struct Node *left, *right;
    int i, j;
} Node;

static int stretch_depth = 18, long_lived_depth = 16, array_size = 500000, min_depth = 4, max_depth = 16;
static int holes;

static long tree_size(int d) { return (1L << (d + 1)) - 1; }
static long num_iters(int d) { return 2 * tree_size(stretch_depth) / tree_size(d); }

typedef struct {
    uint64_t rng;
#ifdef BOEHM_INLINE
    BoehmFreeLists fl;
#endif
} Thread;

static uint64_t next(Thread *t) {
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}
static void hole(Thread *t) {
    if (!holes) return;
    uint64_t r = next(t);
    int k = r ? __builtin_ctzll(r) : 64;
    if (k > 7) k = 7;
    size_t base = (size_t)16 << k;
    GC_MALLOC_ATOMIC(base + (size_t)(next(t) % base));
}
static Node *node(Thread *t) {
#ifdef BOEHM_INLINE
    void *n;
    BOEHM_NEW(n, sizeof(Node), t->fl);
    return n;
#else
    (void)t;
    return GC_MALLOC(sizeof(Node));
#endif
}

static void populate(Thread *t, int depth, Node *n) {
    if (depth <= 0) return;
    n->left = node(t);
    hole(t);
    n->right = node(t);
    hole(t);
    populate(t, depth - 1, n->left);
    populate(t, depth - 1, n->right);
}
static Node *make_tree(Thread *t, int depth) {
    Node *l = NULL, *r = NULL;
    if (depth > 0) {
        l = make_tree(t, depth - 1);
        r = make_tree(t, depth - 1);
    }
    Node *n = node(t);
    n->left = l;
    n->right = r;
    hole(t);
    return n;
}
static long count(Node *n) { return n ? 1 + count(n->left) + count(n->right) : 0; }

static void *run(void *arg) {
    /* The RNG is written at every hole: keep it on this thread's stack, not
     * beside the other threads' in main's array. */
    Thread local = *(Thread *)arg, *t = &local;
    mc_thread_start();
#ifdef BOEHM_INLINE
    memset(local.fl, 0, sizeof local.fl);
#endif
    make_tree(t, stretch_depth);
    Node *long_lived = node(t);
    populate(t, long_lived_depth, long_lived);
    double *array = GC_MALLOC_ATOMIC(sizeof(double) * (size_t)array_size);
    for (int i = 0; i < array_size / 2; i++) array[i] = 1.0 / i;
    long trees = 0;
    for (int d = min_depth; d <= max_depth; d += 2) {
        long iters = num_iters(d);
        for (long i = 0; i < iters; i++) {
            Node *tmp = node(t);
            populate(t, d, tmp);
            trees++;
        }
        for (long i = 0; i < iters; i++) {
            make_tree(t, d);
            trees++;
        }
    }
    if (array[1000] != 1.0 / 1000) {
        fprintf(stderr, "array corrupted\n");
        exit(1);
    }
    unsigned long long *out = malloc(sizeof *out);
    *out = (unsigned long long)count(long_lived) * 1000000ULL + (unsigned long long)trees;
    mc_thread_end();
    return out;
}

int main(int argc, char **argv) {
    holes = argc > 1 ? atoi(argv[1]) : 0;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (argc > 7) {
        stretch_depth = atoi(argv[3]);
        long_lived_depth = atoi(argv[4]);
        array_size = atoi(argv[5]);
        min_depth = atoi(argv[6]);
        max_depth = atoi(argv[7]);
    }
    if (threads < 1 || threads > 64 || array_size <= 1000) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    boehm_init();
    pthread_t tid[64];
    Thread st[64];
    void *res[64];
    double start = now_ns();
    for (int i = 0; i < threads; i++) {
        st[i].rng = 42 + (uint64_t)i;
        pthread_create(&tid[i], NULL, run, &st[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], &res[i]);
    printf("TIME %.3f\n", (now_ns() - start) / 1e6);
    unsigned long long check = *(unsigned long long *)res[0];
    for (int i = 1; i < threads; i++) {
        if (check != *(unsigned long long *)res[i]) {
            fprintf(stderr, "threads disagree\n");
            return 1;
        }
    }
    boehm_result(check);
    return 0;
}
