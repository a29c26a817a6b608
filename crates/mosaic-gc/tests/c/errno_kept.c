/* Allocation and collection calls that succeed leave errno as the program
 * set it, as bdwgc's do: a program that saw a system call fail may
 * allocate before it reads errno. Two threads allocate (small, pointer-free
 * and large objects, GC_malloc_many, GC_free) with errno set, while the
 * main thread collects; the collector's waits for each other (futexes,
 * contended locks) must not leave EAGAIN or ETIMEDOUT behind.
 * Each check prints "name: ok". */
#define GC_THREADS
#include <gc.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 400000
#define MARK 4242

static volatile int done;

static void *allocator(void *arg) {
    (void)arg;
    long changed = 0;
    for (int i = 0; i < ROUNDS; i++) {
        errno = MARK;
        long *p = GC_MALLOC(16 + (i % 50) * 16);
        char *s = GC_MALLOC_ATOMIC(24 + i % 300);
        if (i % 1000 == 0) {
            void *big = GC_MALLOC(200000);
            void *list = GC_malloc_many(32);
            GC_FREE(big);
            (void)list;
        }
        if (i % 7 == 0) GC_FREE(s);
        if (errno != MARK) changed++;
        p[0] = i;
    }
    return (void *)changed;
}

int main(void) {
    GC_INIT();
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, allocator, NULL);
    long collect_changed = 0;
    for (int i = 0; i < 200; i++) {
        errno = MARK;
        GC_gcollect();
        if (errno != MARK) collect_changed++;
    }
    long changed = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        changed += (long)r;
    }
    if (changed) fprintf(stderr, "errno changed by %ld allocation rounds\n", changed);
    printf("allocations keep errno: %s\n", changed == 0 ? "ok" : "FAILED");
    printf("collections keep errno: %s\n", collect_changed == 0 ? "ok" : "FAILED");
    return 0;
}
