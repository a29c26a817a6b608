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
#include <unistd.h>

#define ROUNDS 400000
#define MARK 4242

/* GC_do_blocking's function: a system call that fails. */
static void *failing_read(void *arg) {
    char c;
    (void)arg;
    return (void *)(long)read(-1, &c, 1);
}

/* GC_call_with_alloc_lock's function: it sets errno itself. */
static void *sets_errno(void *arg) {
    (void)arg;
    errno = 77;
    return NULL;
}

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
        if (i % 101 == 0) {
            /* Uncollectable objects make every free look them up. */
            void *u = GC_MALLOC_UNCOLLECTABLE(40);
            u = GC_REALLOC(u, 400);
            GC_FREE(u);
        }
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
    printf("collections keep errno: %s\n",
           collect_changed == 0 && GC_get_gc_no() >= 200 ? "ok" : "FAILED");

    /* The errno of the program's own code comes back from the calls that
     * run it. */
    errno = MARK;
    long r = (long)GC_do_blocking(failing_read, NULL);
    int blocked = errno;
    errno = MARK;
    GC_call_with_alloc_lock(sets_errno, NULL);
    printf("the program's errno from inside a call: %s\n",
           r == -1 && blocked == EBADF && errno == 77 ? "ok" : "FAILED");
    return 0;
}
