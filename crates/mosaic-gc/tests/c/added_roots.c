/* Root ranges added with GC_add_roots. A large one (1 MiB of malloc'd
 * memory, over the collector's 8 KiB threshold for queueing a range in
 * pieces for its markers) keeps exactly the objects it points to, with
 * their contents, through collections on two markers. And a range that a
 * thread the collector does not know (a plain pthread_create, never
 * stopped) removes and unmaps in the middle of a collection: the
 * program's push-other-roots procedure, which runs after the added ranges
 * were queued and before any of them is read, lets that thread go and
 * waits up to 50 ms for it. GC_remove_roots must not return before the
 * collection has finished reading the range (bdwgc's takes the allocation
 * lock, which a collection holds throughout, once the program is
 * multi-threaded), or a marker reads unmapped memory and the program
 * dies. The real library passes this test too. */
/* The thread API's declarations, without pthread_create redirected: the
 * remover below stays unknown to the collector. */
#define GC_THREADS
#define GC_NO_THREAD_REDIRECTS
#include <gc.h>
#include <gc_mark.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

enum { WORDS = 1 << 17, OBJECTS = 20000, RANGE = 256 << 10 };

struct obj { uintptr_t id; struct obj *self; };

static void *range;
static atomic_int go, done, armed, done_in_pause = -1;
static GC_push_other_roots_proc old_push;

static void *remover(void *arg) {
    (void)arg;
    while (!atomic_load(&go)) sched_yield();
    GC_remove_roots(range, (char *)range + RANGE);
    munmap(range, RANGE);
    atomic_store(&done, 1);
    return NULL;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void push_other(void) {
    if (atomic_exchange(&armed, 0)) {
        atomic_store(&go, 1);
        double start = now_ms();
        while (!atomic_load(&done) && now_ms() - start < 50) sched_yield();
        atomic_store(&done_in_pause, atomic_load(&done));
    }
    if (old_push) old_push();
}

int main(void) {
    GC_INIT();
    uintptr_t *table = calloc(WORDS, sizeof *table);
    GC_add_roots(table, table + WORDS);
    for (size_t i = 0; i < OBJECTS; i++) {
        struct obj *o = GC_MALLOC(sizeof *o);
        o->id = i;
        o->self = o;
        table[(i * 7919) % WORDS] = (uintptr_t)o;
        (void)GC_MALLOC(sizeof *o); /* garbage between them */
    }
    int bad = 0;
    for (int round = 0; round < 5; round++) {
        GC_gcollect();
        for (int k = 0; k < 2000; k++) (void)GC_MALLOC(sizeof(struct obj)); /* reuse freed slots */
        for (size_t i = 0; i < OBJECTS; i++) {
            struct obj *o = (struct obj *)table[(i * 7919) % WORDS];
            bad += o->id != i || o->self != o;
        }
    }
    printf("a 1 MiB added range keeps its objects intact: %s\n", bad ? "FAILED" : "ok");

    range = mmap(NULL, RANGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (range == MAP_FAILED) {
        printf("mmap failed\n");
        return 1;
    }
    GC_add_roots(range, (char *)range + RANGE);
    /* Multi-threaded from here on (bdwgc takes its lock only then). */
    GC_allow_register_threads();
    pthread_t t;
    if (pthread_create(&t, NULL, remover, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    old_push = GC_get_push_other_roots();
    GC_set_push_other_roots(push_other);
    atomic_store(&armed, 1);
    GC_gcollect();
    pthread_join(t, NULL);
    GC_set_push_other_roots(old_push);
    int in_pause = atomic_load(&done_in_pause);
    printf("a range removed during a collection is unmapped after it: %s\n",
           in_pause == 0 ? "ok" : in_pause < 0 ? "FAILED (the procedure did not run)" : "FAILED (removed inside the pause)");
    GC_remove_roots(table, table + WORDS);
    free(table);
    return bad != 0 || in_pause != 0;
}
