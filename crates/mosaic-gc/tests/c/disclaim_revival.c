/* A weak map's revival (gc_disclaim.h): objects of a kind with a disclaim
 * procedure are found unreachable by one collection, then looked up again
 * and kept by the program with GC_set_mark_bit under the allocation lock,
 * as bdwgc's disclaim_weakmap_test does. Their procedures, run after a
 * later collection has begun, must see them marked and keep them; once
 * the program drops them, the next procedures must let them go.
 *
 * bdwgc runs such procedures inside the collection that finds the objects
 * unreachable; Mosaic's run outside the pause (here, on demand from
 * GC_invoke_finalizers), so this order happens only on Mosaic. Prints one
 * "<check>: ok" line per check. */
#include <gc.h>
#include <gc_disclaim.h>
#include <gc_mark.h>
#include <stdio.h>

#define N 1000
#define WORDS 4

static GC_hidden_pointer hidden[N];
static GC_word *kept[N];
static int calls, said_marked, let_go;

static int GC_CALLBACK disclaim(void *base) {
    calls++;
    if (GC_is_marked(base)) {
        said_marked++;
        return 1;
    }
    let_go++;
    return 0;
}

static void *GC_CALLBACK set_mark(void *p) {
    GC_set_mark_bit(p);
    return NULL;
}

static GC_word pattern(int i, int w) {
    return (GC_word)i * 7919u + (GC_word)w * 104729u + 1u;
}

/* Fills the objects out of line, so no pointer to them stays in main's
 * frame. */
static void __attribute__((noinline)) allocate(unsigned kind) {
    for (int i = 0; i < N; i++) {
        GC_word *o = GC_generic_malloc(WORDS * sizeof(GC_word), kind);
        for (int w = 0; w < WORDS; w++)
            o[w] = pattern(i, w);
        hidden[i] = GC_HIDE_POINTER(o);
    }
}

static void __attribute__((noinline)) revive_all(void) {
    for (int i = 0; i < N; i++) {
        GC_word *o = GC_REVEAL_POINTER(hidden[i]);
        GC_call_with_alloc_lock(set_mark, o);
        kept[i] = o;
    }
}

static void __attribute__((noinline)) garbage(unsigned kind) {
    for (int i = 0; i < N; i++) {
        GC_word *o = GC_generic_malloc(WORDS * sizeof(GC_word), kind);
        o[0] = 0;
    }
}

int main(void) {
    GC_INIT();
    GC_set_finalize_on_demand(1);
    unsigned kind = GC_new_kind(GC_new_free_list(), GC_DS_LENGTH, 1, 1);
    GC_register_disclaim_proc((int)kind, disclaim, 1);

    allocate(kind);
    GC_gcollect(); /* finds them unreachable: their procedures wait */
    revive_all();
    GC_gcollect(); /* begins before the procedures run */
    GC_invoke_finalizers();
    printf("procedures ran for the revived objects (%d calls): %s\n", calls,
           calls >= N / 2 ? "ok" : "WRONG");
    printf("each saw its object marked and kept it (%d of %d, %d let go): %s\n",
           said_marked, calls, let_go, said_marked == calls && let_go == 0 ? "ok" : "WRONG");

    int intact = 1;
    for (int round = 0; round < 3; round++) {
        garbage(kind);
        GC_gcollect();
        GC_invoke_finalizers();
    }
    for (int i = 0; i < N; i++)
        for (int w = 0; w < WORDS; w++)
            if (kept[i][w] != pattern(i, w))
                intact = 0;
    printf("the kept objects are intact after more collections: %s\n", intact ? "ok" : "WRONG");

    int before = let_go;
    for (int i = 0; i < N; i++)
        kept[i] = NULL;
    GC_gcollect();
    GC_invoke_finalizers();
    printf("dropped, they are let go (%d): %s\n", let_go - before,
           let_go - before >= N / 2 ? "ok" : "WRONG");
    return 0;
}
