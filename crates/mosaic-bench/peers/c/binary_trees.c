/* binary-trees (Benchmarks Game) on the Boehm collector. A leaf is a node
 * with two NULL children, allocated like every other node.
 * usage: binary_trees N   (prints TIME: the body, after GC_INIT)
 * Built twice: nodes from GC_MALLOC, or (-DBOEHM_INLINE) from gc_inline.h's
 * inline free lists (a static array, scanned as a root). */
#include "boehm.h"

typedef struct Node { struct Node *l, *r; } Node;

/* Bottom-up, children before their parent, as in the other peers. */
static Node *make(int d) {
    Node *l = NULL, *r = NULL;
    if (d > 0) {
        l = make(d - 1);
        r = make(d - 1);
    }
#ifdef BOEHM_INLINE
    static BoehmFreeLists fl;
    Node *n;
    BOEHM_NEW(n, sizeof(Node), fl);
#else
    Node *n = GC_MALLOC(sizeof(Node));
#endif
    n->l = l;
    n->r = r;
    return n;
}
static long check(Node *n) { return n->l ? 1 + check(n->l) + check(n->r) : 1; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10, min = 4, max = n > min + 2 ? n : min + 2;
    boehm_init();
    double start = now_ns();
    unsigned long long total = check(make(max + 1));
    Node *long_lived = make(max);
    for (int d = min; d <= max; d += 2)
        for (long i = 0; i < 1L << (max - d + min); i++) total += check(make(d));
    total += check(long_lived);
    printf("TIME %.3f\n", (now_ns() - start) / 1e6);
    boehm_result(total);
    return 0;
}
