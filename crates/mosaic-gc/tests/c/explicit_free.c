/* GC_free's byte count (GC_get_expl_freed_bytes_since_gc): every object
 * freed counts its GC_size, whichever thread freed it and whether that
 * thread is still running; a collection starts the count again. (bdwgc
 * 8.2.2 also counts the frees of its own per-thread records: 2 KiB more
 * for the two threads here.) Prints one "<check>: ok" line per check. */
#define GC_THREADS
#include <gc.h>
#include <gc/gc_disclaim.h>
#include <gc/gc_mark.h>
#include <pthread.h>
#include <stdio.h>

#define N 100

static size_t free_some(int n, size_t size, int atomic) {
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        void *p = atomic ? GC_MALLOC_ATOMIC(size) : GC_MALLOC(size);
        bytes += GC_size(p);
        GC_FREE(p);
    }
    return bytes;
}

static void *thread_main(void *arg) {
    *(size_t *)arg = free_some(N, 200, 0) + free_some(N, 5000, 1);
    return NULL;
}

static int finalized;
static void count_finalized(void *obj, void *data) {
    (void)obj;
    (void)data;
    finalized++;
}

/* A disclaim procedure that keeps the first REVIVALS objects it is asked
 * about (they are asked again after a later collection) and lets every
 * other go. */
#define REVIVALS 10
static int disclaimed, revived;
static int GC_CALLBACK disclaim(void *base) {
    (void)base;
    disclaimed++;
    if (revived < REVIVALS) {
        revived++;
        return 1;
    }
    return 0;
}

/* Garbage made out of line, so that no pointer to it stays in main's
 * frame. */
static void __attribute__((noinline)) kind_garbage(unsigned kind, int n) {
    for (int i = 0; i < n; i++) {
        GC_word *o = GC_generic_malloc(4 * sizeof(GC_word), kind);
        o[1] = (GC_word)i;
    }
}

static void __attribute__((noinline)) large_finalized_garbage(const struct GC_finalizer_closure *fc) {
    for (int i = 0; i < 8; i++)
        GC_finalized_malloc(100000, fc);
}

/* Collects until the procedures or closures have run (count passes 0). */
static void collect_until(int *count) {
    for (int i = 0; i < 4 && *count == 0; i++) {
        GC_gcollect();
        GC_invoke_finalizers();
    }
}

static void check(const char *what, int ok) {
    printf("%s: %s\n", what, ok ? "ok" : "FAILED");
}

int main(void) {
    GC_INIT();
    GC_gcollect();
    GC_disable(); /* no collection restarts the count meanwhile */
    size_t before = GC_get_expl_freed_bytes_since_gc();
    check("nothing freed since the collection", before == 0);
    size_t mine = free_some(N, 48, 1) + free_some(N, 100, 0) + free_some(3, 100000, 0);
    check("every free counts its object's size",
          GC_get_expl_freed_bytes_since_gc() == mine);
    size_t theirs[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread_main, &theirs[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    check("frees of threads that have exited still count",
          GC_get_expl_freed_bytes_since_gc() == mine + theirs[0] + theirs[1]);
    GC_enable();
    GC_gcollect();
    check("a collection starts the count again", GC_get_expl_freed_bytes_since_gc() == 0);
    size_t again = free_some(10, 64, 0);
    check("and it counts from there", GC_get_expl_freed_bytes_since_gc() == again);
    /* Objects reclaimed after their finalizer closure ran were not freed
     * explicitly. */
    GC_init_finalized_malloc();
    static const struct GC_finalizer_closure fc = {count_finalized, NULL};
    for (int i = 0; i < 1000; i++)
        GC_finalized_malloc(64, &fc);
    for (int i = 0; i < 3 && finalized == 0; i++) {
        GC_gcollect();
        GC_invoke_finalizers();
    }
    check("closures ran", finalized > 0);
    check("reclaiming finalized objects is no explicit free",
          GC_get_expl_freed_bytes_since_gc() == 0);
    /* A large finalized object and an object of a kind with a disclaim
     * procedure are freed by the library once the closure or procedure
     * let them go: no explicit free either. */
    finalized = 0;
    large_finalized_garbage(&fc);
    collect_until(&finalized);
    check("large finalized objects are reclaimed without counting",
          finalized > 0 && GC_get_expl_freed_bytes_since_gc() == 0);
    unsigned kind = GC_new_kind(GC_new_free_list(), GC_DS_LENGTH, 1, 1);
    GC_register_disclaim_proc((int)kind, disclaim, 0);
    kind_garbage(kind, 1000);
    collect_until(&disclaimed);
    int first = disclaimed;
    GC_gcollect();
    GC_invoke_finalizers(); /* the revived ones are asked again */
    check("objects a disclaim procedure lets go are no explicit free",
          first > REVIVALS && disclaimed - first >= REVIVALS &&
              GC_get_expl_freed_bytes_since_gc() == 0);
    return 0;
}
