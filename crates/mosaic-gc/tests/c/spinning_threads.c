/* Threads that never call into the collector (spinning on data held only
 * in their locals and registers) are stopped by the signal, scanned, and
 * their data survive, while the main thread collects over and over; each
 * collection returns promptly. A thread blocked in read() holding objects
 * in its locals keeps them too, and its read is restarted (SA_RESTART). */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SPINNERS 3
#define LEN 2000

struct node { struct node *next; long id; };

static volatile int stop;
static volatile long spins[SPINNERS];
static int fds[2];

static struct node *make_list(long base) {
    struct node *head = NULL;
    for (long i = 0; i < LEN; i++) {
        struct node *n = GC_MALLOC(sizeof *n);
        n->id = base + i;
        n->next = head;
        head = n;
    }
    return head;
}

static long sum(struct node *n) {
    long s = 0;
    for (; n; n = n->next) s += n->id;
    return s;
}

static void *spinner(void *arg) {
    long k = (long)arg;
    struct node *head = make_list(k * 100000);
    long want = sum(head);
    while (!stop) {
        if (sum(head) != want) { fprintf(stderr, "spinner %ld: list damaged\n", k); exit(1); }
        spins[k]++;
    }
    return (void *)(long)(sum(head) == want);
}

static void *reader(void *arg) {
    (void)arg;
    struct node *head = make_list(7000000);
    long want = sum(head);
    char c;
    ssize_t r = read(fds[0], &c, 1); /* blocks through the collections */
    return (void *)(long)(r == 1 && sum(head) == want);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
    GC_INIT();
    if (pipe(fds) != 0) return 2;
    pthread_t t[SPINNERS], rd;
    for (long i = 0; i < SPINNERS; i++) pthread_create(&t[i], NULL, spinner, (void *)i);
    pthread_create(&rd, NULL, reader, NULL);
    usleep(100000);
    GC_word before = GC_get_gc_no();
    double worst = 0;
    for (int round = 0; round < 30; round++) {
        for (int i = 0; i < 20000; i++) (void)GC_MALLOC(32); /* garbage */
        double t0 = now();
        GC_gcollect();
        double dt = now() - t0;
        if (dt > worst) worst = dt;
    }
    int collections = (int)(GC_get_gc_no() - before);
    stop = 1;
    int ok = 1;
    for (int i = 0; i < SPINNERS; i++) {
        void *r;
        pthread_join(t[i], &r);
        ok &= r != NULL && spins[i] > 0;
    }
    if (write(fds[1], "x", 1) != 1) return 2;
    void *r;
    pthread_join(rd, &r);
    printf("collections while threads spun: %s\n", collections >= 30 ? "ok" : "MISSING");
    printf("every collection returned within 2 s: %s\n", worst < 2.0 ? "ok" : "SLOW");
    printf("spinners' lists intact: %s\n", ok ? "ok" : "DAMAGED");
    printf("blocked reader's list intact: %s\n", r ? "ok" : "DAMAGED");
    return !(collections >= 30 && worst < 2.0 && ok && r);
}
