/* Bad input gets a clear answer and loses nothing: calls before GC_INIT,
 * foreign pointers to GC_free / GC_base / GC_size, double frees, absurd
 * sizes (NULL through the OOM function). (bdwgc itself crashes on GC_FREE
 * of a foreign pointer; Mosaic ignores it.) */
#include <gc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int oom_calls;
static void *count_oom(size_t n) { (void)n; oom_calls++; return NULL; }

int main(void) {
    int ok = 1;
    /* Allowed before GC_INIT on Linux. */
    char *early = GC_MALLOC(100);
    strcpy(early, "allocated before GC_INIT");
    GC_INIT();
    GC_INIT(); /* idempotent */
    int local;
    static int global;
    ok &= GC_base(&local) == NULL && GC_base(&global) == NULL && GC_base(NULL) == NULL;
    ok &= GC_size(&local) == 0 && GC_size(&global) == 0;
    printf("foreign pointers: %s\n", ok ? "ok" : "WRONG");
    GC_FREE(&local);  /* ignored */
    GC_FREE(NULL);
    char *p = GC_MALLOC(24);
    strcpy(p, "still here");
    GC_FREE(p);
    GC_FREE(p);       /* a second free is ignored */
    GC_set_oom_fn(count_oom);
    void *huge = GC_MALLOC((size_t)1 << 60);
    volatile size_t absurd = SIZE_MAX - 8;
    void *huge2 = GC_MALLOC_ATOMIC(absurd);
    int oom_ok = huge == NULL && huge2 == NULL && oom_calls == 2;
    /* Sizes within a word of SIZE_MAX (a negative int passed as a size),
     * with a run of each kind in hand: the inline path must not wrap
     * them round to a small class. */
    (void)GC_MALLOC(8);
    (void)GC_MALLOC_ATOMIC(8);
    for (size_t k = 0; k < 10; k++) {
        volatile size_t n = SIZE_MAX - k;
        oom_ok &= GC_MALLOC(n) == NULL && GC_MALLOC_ATOMIC(n) == NULL;
    }
    oom_ok &= oom_calls == 22;
    printf("absurd sizes give NULL through the OOM function: %s\n", oom_ok ? "ok" : "WRONG");
    GC_gcollect();
    int early_ok = strcmp(early, "allocated before GC_INIT") == 0 && GC_base(early + 5) == early;
    printf("the early object survives: %s\n", early_ok ? "ok" : "LOST");
    void *q = GC_MALLOC(40);
    int after_ok = q != NULL && GC_size(q) >= 40 && GC_base((char *)q + 39) == q;
    printf("allocation goes on: %s\n", after_ok ? "ok" : "WRONG");
    return !(ok && oom_ok && early_ok && after_ok);
}
