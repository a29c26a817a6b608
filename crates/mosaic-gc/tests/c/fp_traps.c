/* A program that runs with floating-point exceptions unmasked (ECL does so
 * for division by zero, overflow and invalid operations; numerical code
 * turns on the inexact trap to find rounding) allocates and collects as
 * any other: the collector's own arithmetic (its heap sizing and growth
 * policies compute with doubles) must neither raise SIGFPE in the
 * program's threads nor leave exception flags set in them. bdwgc computes
 * with integers only, so the program sees exactly what it would see there.
 *
 * With argument "early" the traps are enabled before GC_INIT, so that any
 * thread the collector starts inherits them; with "masked" none is enabled
 * (as most programs run) and no flag may appear; otherwise they are
 * enabled right after GC_INIT. The checks compare the SSE control and
 * status register (MXCSR) and the C library's view (fegetexcept reads the
 * x87 control word, fetestexcept both units' flags) with what the program
 * set. Every check prints "name: ok"; a trap kills the program (SIGFPE). */
#define _GNU_SOURCE
#define GC_THREADS
#include <gc.h>
#include <fenv.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <xmmintrin.h>

struct node { struct node *l, *r; long v; };

static struct node *make(int d) {
    struct node *n = GC_MALLOC(sizeof *n);
    n->v = d;
    if (d > 0) {
        n->l = make(d - 1);
        n->r = make(d - 1);
    }
    return n;
}

static long check(const struct node *n) {
    return n->l ? n->v + check(n->l) + check(n->r) : n->v;
}

/* What make(d) sums to: v = d at each node of depth d. */
static long expected(int d) {
    return d == 0 ? 0 : d + 2 * expected(d - 1);
}

/* Trees, pointer-free buffers of many sizes and large objects, long enough
 * to collect many times; the checksum of every tree. 1 if all were whole. */
static int churn(int rounds) {
    int whole = 1;
    for (int i = 0; i < rounds; i++) {
        struct node *t = make(10);
        char *s = GC_MALLOC_ATOMIC(17 + (i * 131) % 4000);
        memset(s, 'x', 16);
        void *big = GC_MALLOC(100000 + (i % 7) * 8192);
        ((long *)big)[0] = i;
        if (check(t) != expected(10) || s[15] != 'x' || ((long *)big)[0] != i) whole = 0;
    }
    return whole;
}

/* What the program set: every exception enabled, or (masked) none. */
static int traps;

/* The thread's exceptions are enabled as the program left them and none is
 * flagged. */
static int env_unchanged(void) {
    unsigned csr = _mm_getcsr();
    /* The default, 0x1F80, has every exception masked; feenableexcept
     * unmasks all but the denormal one (not in FE_ALL_EXCEPT). No flag. */
    unsigned want = traps ? 0x0100 : 0x1F80;
    return fegetexcept() == traps && fetestexcept(FE_ALL_EXCEPT) == 0 && csr == want;
}

static void *worker(void *arg) {
    (void)arg;
    /* A new thread inherits its creator's floating-point environment. */
    int ok = env_unchanged() && churn(150) && env_unchanged();
    return ok ? (void *)1 : NULL;
}

int main(int argc, char **argv) {
    int early = argc > 1 && strcmp(argv[1], "early") == 0;
    int masked = argc > 1 && strcmp(argv[1], "masked") == 0;
    traps = masked ? 0 : FE_ALL_EXCEPT;
    feclearexcept(FE_ALL_EXCEPT);
    if (early) feenableexcept(traps);
    GC_INIT();
    if (!early && !masked) feenableexcept(traps);

    struct node *keep = make(14);
    int whole = churn(300);
    printf("collections with the traps set: %s\n",
           whole && GC_get_gc_no() > 5 ? "ok" : "FAILED");
    printf("the main thread's environment unchanged: %s\n", env_unchanged() ? "ok" : "FAILED");

    pthread_t t[2];
    void *r[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
    int threads_ok = churn(150);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], &r[i]);
        threads_ok = threads_ok && r[i] != NULL;
    }
    printf("threads allocating with the traps set: %s\n", threads_ok ? "ok" : "FAILED");

    GC_gcollect();
    GC_gcollect_and_unmap();
    printf("explicit collections: %s\n",
           check(keep) == expected(14) && env_unchanged() ? "ok" : "FAILED");
    return 0;
}
