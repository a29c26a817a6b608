/* GC_suspend_thread / GC_resume_thread / GC_is_thread_suspended: a thread
 * that spins (never calling the collector) stops while suspended, its data
 * survives the collections made meanwhile, it goes on once resumed, and a
 * thread that suspends itself waits in a blocking region until another
 * resumes it, and a thread suspended the moment pthread_create returns
 * (bdwgc registers it before returning) reads as suspended and stays
 * stopped until resumed. Each line of the report ends in "ok". */
#define GC_THREADS
#include <gc.h>
#include <javaxfc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile long spins;
static volatile int stop;

static void *spinner(void *arg) {
    char *keep = GC_MALLOC_ATOMIC(32); /* only this stack holds it */
    strcpy(keep, "spinner's data");
    *(char **)arg = (char *)GC_HIDE_POINTER(keep);
    while (!stop) spins++;
    return strcmp(keep, "spinner's data") == 0 ? keep : 0;
}

static volatile int self_resumed;
static void *self_suspender(void *arg) {
    (void)arg;
    GC_suspend_thread(pthread_self()); /* returns once resumed */
    self_resumed = 1;
    return 0;
}

static volatile int quick_ran;
static void *quick(void *arg) {
    (void)arg;
    quick_ran++;
    return 0;
}

static void *collector(void *arg) {
    (void)arg;
    while (!stop) {
        for (int j = 0; j < 1000; j++) (void)GC_MALLOC(64);
        GC_gcollect();
    }
    return 0;
}

static void nap_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, 0);
}

int main(void) {
    GC_INIT();
    GC_allow_register_threads();
    pthread_t t;
    char *hidden = 0;
    pthread_create(&t, 0, spinner, &hidden);
    while (!hidden) nap_ms(1);
    printf("a running thread is not suspended: %s\n", GC_is_thread_suspended(t) ? "WRONG" : "ok");
    GC_suspend_thread(t);
    long before = spins;
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 10000; j++) (void)GC_MALLOC(64);
        GC_gcollect();
    }
    nap_ms(20);
    printf("a suspended thread stays stopped through collections: %s\n",
           GC_is_thread_suspended(t) && spins == before ? "ok" : "WRONG");
    GC_resume_thread(t);
    nap_ms(20);
    printf("a resumed thread goes on: %s\n",
           !GC_is_thread_suspended(t) && spins != before ? "ok" : "WRONG");
    stop = 1;
    void *r = 0;
    pthread_join(t, &r);
    printf("its data survived: %s\n", r != 0 ? "ok" : "WRONG");

    pthread_t s;
    pthread_create(&s, 0, self_suspender, 0);
    while (!GC_is_thread_suspended(s)) nap_ms(1);
    GC_gcollect(); /* it waits in a blocking region: no stall */
    nap_ms(10);
    int waited = !self_resumed;
    GC_resume_thread(s);
    pthread_join(s, 0);
    printf("a thread that suspends itself waits until resumed: %s\n",
           waited && self_resumed ? "ok" : "WRONG");

    /* Before the create waited for the new thread to register, a thread
     * suspended at once was not found, then registered unsuspended (most
     * often while another thread's collections delayed its registering). */
    pthread_t c;
    stop = 0;
    pthread_create(&c, 0, collector, 0);
    int wrong = 0;
    for (int i = 0; i < 300; i++) {
        pthread_t q;
        pthread_create(&q, 0, quick, 0);
        GC_suspend_thread(q);
        if (!GC_is_thread_suspended(q)) wrong++;
        GC_resume_thread(q);
        pthread_join(q, 0);
    }
    stop = 1;
    pthread_join(c, 0);
    printf("a thread suspended as soon as it is created reads as suspended (%d of 300 not): %s\n",
           wrong, wrong == 0 && quick_ran == 300 ? "ok" : "WRONG");
    return 0;
}
