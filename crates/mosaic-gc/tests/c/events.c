/* GC_set_on_collection_event and GC_set_on_thread_event: every collection
 * sends bdwgc's events in bdwgc's order, as many as there were
 * collections; each thread a collection stops is reported suspended and
 * then unsuspended, with its pthread_t; GC_stop_world_external sends
 * thread events but no collection events.
 * Prints one "<check>: ok" line per check. */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_EVENTS 100000

static int events[MAX_EVENTS];
static volatile int n_events;
static pthread_t thread_ids[64];
static int thread_events[64];
static volatile int n_thread_events;

static void on_collection(GC_EventType e) {
    if (n_events < MAX_EVENTS)
        events[n_events++] = (int)e;
}

static void on_thread(GC_EventType e, void *id) {
    if (n_thread_events < 64) {
        thread_events[n_thread_events] = (int)e;
        thread_ids[n_thread_events] = (pthread_t)id;
        n_thread_events++;
    }
}

static const int one_collection[] = {
    GC_EVENT_START,           GC_EVENT_PRE_STOP_WORLD, GC_EVENT_POST_STOP_WORLD,
    GC_EVENT_MARK_START,      GC_EVENT_MARK_END,       GC_EVENT_PRE_START_WORLD,
    GC_EVENT_POST_START_WORLD, GC_EVENT_RECLAIM_START, GC_EVENT_RECLAIM_END,
    GC_EVENT_END,
};
#define PER_COLLECTION ((int)(sizeof one_collection / sizeof one_collection[0]))

static volatile int stop_spinning;
static volatile int spinning;

static void *spin(void *arg) {
    (void)arg;
    spinning = 1;
    while (!stop_spinning) {
    }
    return NULL;
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
    int ok = n_events == PER_COLLECTION;
    for (int i = 0; ok && i < PER_COLLECTION; i++)
        ok = events[i] == one_collection[i];
    if (!ok) {
        printf("one collection's events:");
        for (int i = 0; i < n_events; i++)
            printf(" %d", events[i]);
        printf("\n");
        return 1;
    }
    printf("an explicit collection sends bdwgc's ten events in order: ok\n");

    /* Collections the allocation rate starts: whole sequences, one per
     * collection counted by GC_get_gc_no. */
    n_events = 0;
    GC_word before = GC_get_gc_no();
    void **keep = GC_MALLOC(64 * sizeof(void *));
    for (int i = 0; i < 400000; i++) {
        void **p = GC_MALLOC(64);
        p[0] = keep[i % 64];
        keep[i % 64] = p;
    }
    GC_word collections = GC_get_gc_no() - before;
    ok = collections > 0 && n_events == (int)collections * PER_COLLECTION;
    for (int i = 0; ok && i < n_events; i++)
        ok = events[i] == one_collection[i % PER_COLLECTION];
    if (!ok) {
        printf("allocation-started collections: %lu collections, %d events\n",
               (unsigned long)collections, n_events);
        return 1;
    }
    printf("allocation-started collections each send the sequence: ok\n");

    /* A thread that never calls in: suspended and unsuspended by id. */
    GC_set_on_thread_event(on_thread);
    pthread_t t;
    if (pthread_create(&t, NULL, spin, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    while (!spinning) {
    }
    n_thread_events = 0;
    n_events = 0;
    GC_gcollect();
    ok = n_thread_events == 2 && thread_events[0] == GC_EVENT_THREAD_SUSPENDED &&
         thread_events[1] == GC_EVENT_THREAD_UNSUSPENDED && pthread_equal(thread_ids[0], t) &&
         pthread_equal(thread_ids[1], t) && n_events == PER_COLLECTION;
    if (!ok) {
        printf("thread events: %d (", n_thread_events);
        for (int i = 0; i < n_thread_events; i++)
            printf(" %d", thread_events[i]);
        printf(" ), collection events %d\n", n_events);
        return 1;
    }
    printf("a stopped thread is reported suspended, then unsuspended: ok\n");

    /* Stopping the world without collecting: thread events only. */
    n_thread_events = 0;
    n_events = 0;
    GC_stop_world_external();
    GC_start_world_external();
    ok = n_thread_events == 2 && thread_events[0] == GC_EVENT_THREAD_SUSPENDED &&
         thread_events[1] == GC_EVENT_THREAD_UNSUSPENDED && n_events == 0;
    if (!ok) {
        printf("external stop: %d thread events, %d collection events\n", n_thread_events, n_events);
        return 1;
    }
    printf("an external stop sends thread events and no collection events: ok\n");

    stop_spinning = 1;
    pthread_join(t, NULL);
    GC_set_on_collection_event(0);
    GC_set_on_thread_event(0);
    n_events = 0;
    GC_gcollect();
    printf("removed callbacks are not called: %s\n", n_events == 0 ? "ok" : "called");
    return 0;
}
