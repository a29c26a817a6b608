/* GC_set_on_collection_event and GC_set_on_thread_event: every collection
 * sends bdwgc's events in bdwgc's order, as many as there were
 * collections; each thread a collection stops is reported suspended while
 * the world stops and unsuspended while it restarts, with its pthread_t;
 * collections started by two threads never overlap their events;
 * GC_stop_world_external sends thread events but no collection events; a
 * thread held by GC_suspend_thread is not reported.
 * Prints one "<check>: ok" line per check. */
#define GC_THREADS
#include <gc.h>
#include <gc/javaxfc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_EVENTS 200000
#define THREAD_EVENT 100 /* thread events are logged as 100 + the event */

static int events[MAX_EVENTS];
static volatile int n_events;
static pthread_t last_thread_ids[64];
static volatile int n_thread_ids;

/* Nesting: a collection's events from START to END, one at a time. */
static volatile int in_collection;
static volatile int inside_callback;
static volatile int violations;

static void log_event(int e) {
    if (n_events < MAX_EVENTS)
        events[n_events++] = e;
}

static void on_collection(GC_EventType e) {
    if (__atomic_add_fetch(&inside_callback, 1, __ATOMIC_SEQ_CST) != 1)
        violations++;
    if (e == GC_EVENT_START) {
        if (in_collection)
            violations++;
        in_collection = 1;
    } else if (e == GC_EVENT_END) {
        if (!in_collection)
            violations++;
        in_collection = 0;
    } else if (!in_collection) {
        violations++;
    }
    log_event((int)e);
    for (volatile int spin = 0; spin < 200; spin++) {
    }
    __atomic_sub_fetch(&inside_callback, 1, __ATOMIC_SEQ_CST);
}

static void on_thread(GC_EventType e, void *id) {
    log_event(THREAD_EVENT + (int)e);
    if (n_thread_ids < 64)
        last_thread_ids[n_thread_ids++] = (pthread_t)id;
}

static const int one_collection[] = {
    GC_EVENT_START,           GC_EVENT_PRE_STOP_WORLD, GC_EVENT_POST_STOP_WORLD,
    GC_EVENT_MARK_START,      GC_EVENT_MARK_END,       GC_EVENT_PRE_START_WORLD,
    GC_EVENT_POST_START_WORLD, GC_EVENT_RECLAIM_START, GC_EVENT_RECLAIM_END,
    GC_EVENT_END,
};
#define PER_COLLECTION ((int)(sizeof one_collection / sizeof one_collection[0]))

/* With one other thread stopped: its events sit inside the stop and the
 * restart. */
static const int one_collection_one_thread[] = {
    GC_EVENT_START,
    GC_EVENT_PRE_STOP_WORLD,
    THREAD_EVENT + GC_EVENT_THREAD_SUSPENDED,
    GC_EVENT_POST_STOP_WORLD,
    GC_EVENT_MARK_START,
    GC_EVENT_MARK_END,
    GC_EVENT_PRE_START_WORLD,
    THREAD_EVENT + GC_EVENT_THREAD_UNSUSPENDED,
    GC_EVENT_POST_START_WORLD,
    GC_EVENT_RECLAIM_START,
    GC_EVENT_RECLAIM_END,
    GC_EVENT_END,
};

static int matches(const int *want, int n) {
    if (n_events != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (events[i] != want[i])
            return 0;
    return 1;
}

static void print_log(const char *what) {
    printf("%s:", what);
    for (int i = 0; i < n_events && i < 40; i++)
        printf(" %d", events[i]);
    printf(" (%d events, %d violations)\n", n_events, violations);
}

static volatile int stop_spinning;
static volatile int spinning;

static void *spin(void *arg) {
    (void)arg;
    spinning = 1;
    while (!stop_spinning) {
    }
    return NULL;
}

static void *allocate(void *arg) {
    void **keep = GC_MALLOC(64 * sizeof(void *));
    for (int i = 0; i < 300000; i++) {
        void **p = GC_MALLOC(48);
        p[0] = keep[i % 64];
        keep[i % 64] = p;
    }
    return arg;
}

int main(void) {
    GC_INIT();
    GC_set_on_collection_event(on_collection);
    if (GC_get_on_collection_event() != on_collection) {
        printf("the collection callback reads back: it does not\n");
        return 1;
    }

    /* One explicit collection: exactly bdwgc's sequence. */
    GC_gcollect();
    if (!matches(one_collection, PER_COLLECTION) || violations) {
        print_log("one collection's events");
        return 1;
    }
    printf("an explicit collection sends bdwgc's ten events in order: ok\n");

    /* Collections two threads start by allocating: whole sequences, one
     * per collection counted by GC_get_gc_no, never two at once. */
    n_events = 0;
    GC_word before = GC_get_gc_no();
    pthread_t a, b;
    if (pthread_create(&a, NULL, allocate, NULL) != 0 || pthread_create(&b, NULL, allocate, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    allocate(NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    GC_word collections = GC_get_gc_no() - before;
    int ok = collections > 0 && n_events == (int)collections * PER_COLLECTION && !violations;
    for (int i = 0; ok && i < n_events; i++)
        ok = events[i] == one_collection[i % PER_COLLECTION];
    if (!ok) {
        printf("%lu collections; ", (unsigned long)collections);
        print_log("allocation-started collections");
        return 1;
    }
    printf("collections three threads start each send the sequence, one at a time: ok\n");

    /* A thread that never calls in: suspended while the world stops,
     * unsuspended while it restarts, by id. */
    GC_set_on_thread_event(on_thread);
    pthread_t t;
    if (pthread_create(&t, NULL, spin, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    while (!spinning) {
    }
    n_events = 0;
    n_thread_ids = 0;
    GC_gcollect();
    int n_with_thread = (int)(sizeof one_collection_one_thread / sizeof one_collection_one_thread[0]);
    if (!matches(one_collection_one_thread, n_with_thread) || n_thread_ids != 2 ||
        !pthread_equal(last_thread_ids[0], t) || !pthread_equal(last_thread_ids[1], t)) {
        print_log("a collection with a stopped thread");
        return 1;
    }
    printf("a stopped thread is reported suspended, then unsuspended, inside the sequence: ok\n");

    /* Stopping the world without collecting: thread events only. */
    n_events = 0;
    GC_stop_world_external();
    GC_start_world_external();
    static const int external[] = {THREAD_EVENT + GC_EVENT_THREAD_SUSPENDED,
                                   THREAD_EVENT + GC_EVENT_THREAD_UNSUSPENDED};
    if (!matches(external, 2)) {
        print_log("an external stop");
        return 1;
    }
    printf("an external stop sends thread events and no collection events: ok\n");

    /* A thread held by GC_suspend_thread is not reported by collections. */
    GC_suspend_thread(t);
    n_events = 0;
    GC_gcollect();
    int held_ok = matches(one_collection, PER_COLLECTION);
    GC_resume_thread(t);
    if (!held_ok) {
        print_log("a collection with a held thread");
        return 1;
    }
    printf("a thread held by GC_suspend_thread is not reported: ok\n");

    stop_spinning = 1;
    pthread_join(t, NULL);
    GC_set_on_collection_event(0);
    GC_set_on_thread_event(0);
    n_events = 0;
    GC_gcollect();
    printf("removed callbacks are not called: %s\n", n_events == 0 ? "ok" : "called");
    return 0;
}
