/* Threads that come and go while another thread collects without pause.
 *
 * CHURNERS threads each start, one after another, ROUNDS short-lived
 * threads; each of those builds a list of LIST cells on the collected
 * heap, checks it and exits. Meanwhile the main thread calls GC_gcollect
 * until the churners are done. So collections stop threads in every part
 * of their lives: registering, allocating, running their thread-locals'
 * destructors at exit, unregistering. A thread stopped while it held a
 * lock the collector needs (the library's own allocator, say) would hang
 * the program: the harness's timeout reports it.
 *
 * Prints the number of threads run and whether every list was intact; the
 * output is the same on every collector. */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHURNERS 3
#define ROUNDS 2000
#define LIST 200
/* Between two collections: the real library takes milliseconds a
 * collection here, and collecting back to back starves the churners. */
#define PAUSE_US 200

struct cell {
    struct cell *next;
    long value;
};

static int finished; /* churners done (atomic builtins) */

static void *short_lived(void *arg) {
    long seed = (long)arg;
    struct cell *head = NULL;
    for (long i = 0; i < LIST; i++) {
        struct cell *c = GC_MALLOC(sizeof *c);
        if (!c) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        c->next = head;
        c->value = seed + i;
        head = c;
    }
    long sum = 0, n = 0;
    for (struct cell *c = head; c; c = c->next) {
        sum += c->value;
        n++;
    }
    /* The sum of seed .. seed + LIST - 1. */
    long want = LIST * seed + (long)LIST * (LIST - 1) / 2;
    return (void *)(n == LIST && sum == want ? 1L : 0L);
}

static void *churner(void *arg) {
    long base = (long)arg * ROUNDS;
    long ok = 0;
    for (long r = 0; r < ROUNDS; r++) {
        pthread_t t;
        void *res;
        if (pthread_create(&t, NULL, short_lived, (void *)(base + r)) != 0
            || pthread_join(t, &res) != 0) {
            fprintf(stderr, "pthread_create or pthread_join failed\n");
            exit(1);
        }
        ok += (long)res;
    }
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
    return (void *)ok;
}

int main(void) {
    GC_INIT();
    pthread_t ts[CHURNERS];
    for (long i = 0; i < CHURNERS; i++) {
        if (pthread_create(&ts[i], NULL, churner, (void *)i) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    long ok = 0;
    /* Collect while the churners run. */
    while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < CHURNERS) {
        GC_gcollect();
        usleep(PAUSE_US);
    }
    for (int i = 0; i < CHURNERS; i++) {
        void *res;
        if (pthread_join(ts[i], &res) != 0) {
            fprintf(stderr, "pthread_join failed\n");
            return 1;
        }
        ok += (long)res;
    }
    fprintf(stderr, "%lu collections\n", (unsigned long)GC_get_gc_no());
    printf("%d threads ran, %ld lists intact\n", CHURNERS * ROUNDS, ok);
    return ok == CHURNERS * ROUNDS ? 0 : 1;
}
