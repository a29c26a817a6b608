/* GCBench (Ellis, Kovac, Boehm) on the Boehm collector, the same algorithm
 * as crates/mosaic-bench/src/workloads/gcbench.rs.
 * usage: gcbench HOLES THREADS   (heap limit: GC_MAXIMUM_HEAP_SIZE) */
#include <pthread.h>
#include <string.h>
#include "boehm.h"

typedef struct Node {
    struct Node *left, *right;
    int i, j;
} Node;

enum { kStretchTreeDepth = 18, kLongLivedTreeDepth = 16, kArraySize = 500000, kMinTreeDepth = 4, kMaxTreeDepth = 16 };
static int holes;

static long tree_size(int d) { return (1L << (d + 1)) - 1; }
static long num_iters(int d) { return 2 * tree_size(kStretchTreeDepth) / tree_size(d); }

typedef struct { uint64_t rng; } Thread;

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
static Node *node(void) { return GC_MALLOC(sizeof(Node)); }

static void populate(Thread *t, int depth, Node *n) {
    if (depth <= 0) return;
    n->left = node();
    hole(t);
    n->right = node();
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
    Node *n = node();
    n->left = l;
    n->right = r;
    hole(t);
    return n;
}
static long count(Node *n) { return n ? 1 + count(n->left) + count(n->right) : 0; }

static void *run(void *arg) {
    Thread *t = arg;
    make_tree(t, kStretchTreeDepth);
    Node *long_lived = node();
    populate(t, kLongLivedTreeDepth, long_lived);
    double *array = GC_MALLOC_ATOMIC(sizeof(double) * kArraySize);
    for (int i = 0; i < kArraySize / 2; i++) array[i] = 1.0 / i;
    long trees = 0;
    for (int d = kMinTreeDepth; d <= kMaxTreeDepth; d += 2) {
        for (long i = 0; i < num_iters(d); i++) {
            Node *tmp = node();
            populate(t, d, tmp);
            trees++;
        }
        for (long i = 0; i < num_iters(d); i++) {
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
    return out;
}

int main(int argc, char **argv) {
    holes = argc > 1 ? atoi(argv[1]) : 0;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    boehm_init();
    pthread_t tid[64];
    Thread st[64];
    unsigned long long check = 0;
    for (int i = 0; i < threads; i++) {
        st[i].rng = 42 + (uint64_t)i;
        pthread_create(&tid[i], NULL, run, &st[i]);
    }
    for (int i = 0; i < threads; i++) {
        void *r;
        pthread_join(tid[i], &r);
        if (i > 0 && check != *(unsigned long long *)r) {
            fprintf(stderr, "threads disagree\n");
            return 1;
        }
        check = *(unsigned long long *)r;
    }
    boehm_result(check);
    return 0;
}
