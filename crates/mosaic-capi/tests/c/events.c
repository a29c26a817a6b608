/* GC events: every collection reports START, MARK_END, END in that order,
 * numbered from 1, with its reason (explicit, allocation, stress) and
 * plausible figures; heap growth reports HEAP_RESIZE; unused fields are 0;
 * the callback may not allocate or collect; NULL removes it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

enum { MAX_EVENTS = 100000 };
static mosaic_event events[MAX_EVENTS];
static int nevents;
static int ctx_ok = 1;

static mosaic_mutator *main_m;
static int try_alloc;
static void *alloc_result = (void *)1;
static mosaic_error alloc_error, collect_error;

static void on_event(void *ctx, const mosaic_event *ev) {
    if (ctx != &nevents) ctx_ok = 0;
    if (nevents < MAX_EVENTS) events[nevents++] = *ev;
    if (try_alloc && ev->kind == MOSAIC_EVENT_COLLECTION_START) {
        try_alloc = 0;
        alloc_result = mosaic_alloc(main_m, 16, 0);
        alloc_error = mosaic_last_error();
        mosaic_collect(main_m);
        collect_error = mosaic_last_error();
    }
}

static void fin(mosaic_mutator *m, void *obj, void *data) {
    (void)m;
    (void)obj;
    (void)data;
}

/* Checks the events of every collection in events[from ..]: START, MARK_END,
 * END with consecutive numbers; returns how many collections, counting
 * those with `reason` in *with_reason. */
static int check_collections(int from, uint64_t first, mosaic_gc_reason reason, int *with_reason) {
    int n = 0;
    uint64_t expect = first;
    *with_reason = 0;
    for (int i = from; i < nevents; i++) {
        const mosaic_event *ev = &events[i];
        if (ev->kind == MOSAIC_EVENT_HEAP_RESIZE) {
            CHECK(ev->reason == MOSAIC_REASON_NONE && ev->number == 0 && ev->old_bytes > 0 && ev->new_bytes > 0 &&
                      ev->old_bytes != ev->new_bytes && ev->marked_objects == 0 && ev->pause_ns == 0 &&
                      ev->heap_bytes == 0,
                  "resize event %d: %zu -> %zu", i, ev->old_bytes, ev->new_bytes);
            continue;
        }
        CHECK(ev->kind == MOSAIC_EVENT_COLLECTION_START, "event %d: kind %d, expected START", i, (int)ev->kind);
        CHECK(ev->number == expect, "event %d: number %llu, expected %llu", i, (unsigned long long)ev->number,
              (unsigned long long)expect);
        CHECK(ev->heap_bytes > 0 && ev->marked_objects == 0 && ev->pause_ns == 0 && ev->old_bytes == 0,
              "START fields");
        mosaic_gc_reason r = ev->reason;
        if (r == reason) ++*with_reason;
        int j = i + 1;
        while (j < nevents && events[j].kind == MOSAIC_EVENT_HEAP_RESIZE) j++;
        CHECK(j < nevents && events[j].kind == MOSAIC_EVENT_MARK_END, "event %d: no MARK_END after START", j);
        if (j >= nevents) break;
        const mosaic_event *mk = &events[j];
        CHECK(mk->number == expect && mk->reason == r, "MARK_END number/reason");
        CHECK(mk->marked_bytes >= 16 * mk->marked_objects && mk->mark_ns > 0 && mk->pause_ns == 0 &&
                  mk->heap_bytes == 0 && mk->live_bytes == 0,
              "MARK_END fields: %llu objects, %llu bytes, %llu ns", (unsigned long long)mk->marked_objects,
              (unsigned long long)mk->marked_bytes, (unsigned long long)mk->mark_ns);
        int k = j + 1;
        while (k < nevents && events[k].kind == MOSAIC_EVENT_HEAP_RESIZE) k++;
        CHECK(k < nevents && events[k].kind == MOSAIC_EVENT_COLLECTION_END, "event %d: no END after MARK_END", k);
        if (k >= nevents) break;
        const mosaic_event *end = &events[k];
        CHECK(end->number == expect && end->reason == r, "END number/reason");
        CHECK(end->live_bytes == mk->marked_bytes && end->pause_ns >= mk->mark_ns && end->heap_bytes > 0 &&
                  end->marked_objects == 0 && end->mark_ns == 0,
              "END fields: live %llu, pause %llu ns", (unsigned long long)end->live_bytes,
              (unsigned long long)end->pause_ns);
        /* HEAP_RESIZE events in between are checked with the others */
        for (int x = i + 1; x < k; x++)
            if (events[x].kind == MOSAIC_EVENT_HEAP_RESIZE) CHECK(events[x].old_bytes != events[x].new_bytes, "resize");
        i = k;
        expect++;
        n++;
    }
    return n;
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 256u << 20;
    c.initial_slots = 1000;
    c.heap_min = 256u << 10; /* the heap target grows past it below */
    c.heap_policy = MOSAIC_HEAP_PROPORTIONAL;
    c.heap_proportional_k = 1.0;
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = main_m = mosaic_mutator_new(h);
    CHECK(mosaic_set_event_callback(h, on_event, &nevents) == MOSAIC_OK, "set callback");

    /* Explicit collections, with 1000 live objects. */
    mosaic_root *keep = mosaic_root_new(m, NULL);
    for (int i = 0; i < 1000; i++) {
        Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
        o->ref = mosaic_root_get(keep);
        mosaic_root_set(keep, o);
    }
    mosaic_collect(m);
    mosaic_collect(m);
    mosaic_collect(m);
    int explicit_ones;
    CHECK(ctx_ok, "callback ctx");
    int n = check_collections(0, 1, MOSAIC_REASON_EXPLICIT, &explicit_ones);
    CHECK(n == 3 && explicit_ones == 3, "%d collections, %d explicit", n, explicit_ones);
    for (int i = 0; i < nevents; i++)
        if (events[i].kind == MOSAIC_EVENT_MARK_END)
            CHECK(events[i].marked_objects == 1000 && events[i].marked_bytes == 1000 * 16, "marked %llu (%llu B)",
                  (unsigned long long)events[i].marked_objects, (unsigned long long)events[i].marked_bytes);
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    CHECK(st.collections == 3, "stats say %llu collections", (unsigned long long)st.collections);

    /* Finalizers queued are counted (and their objects marked). */
    int before = nevents;
    for (int i = 0; i < 5; i++)
        mosaic_register_finalizer(m, mosaic_alloc(m, sizeof(Obj), 0), fin, NULL, MOSAIC_FINALIZE_UNORDERED);
    mosaic_collect(m);
    n = check_collections(before, 4, MOSAIC_REASON_EXPLICIT, &explicit_ones);
    CHECK(n == 1 && explicit_ones == 1, "one more explicit collection");
    CHECK(events[nevents - 1].kind == MOSAIC_EVENT_COLLECTION_END && events[nevents - 1].finalizers_queued == 5,
          "finalizers_queued %zu", events[nevents - 1].finalizers_queued);
    CHECK(events[nevents - 1].live_bytes == 1005 * 16, "live_bytes %llu",
          (unsigned long long)events[nevents - 1].live_bytes);
    CHECK(mosaic_run_finalizers(m) == 5, "ran");

    /* Allocation-triggered collections and heap growth. */
    before = nevents;
    for (int i = 0; i < 300000; i++) {
        Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
        if (i % 4 == 0) { /* a quarter stays live: the pool grows */
            o->ref = mosaic_root_get(keep);
            mosaic_root_set(keep, o);
        }
    }
    int by_alloc;
    n = check_collections(before, 5, MOSAIC_REASON_ALLOCATION, &by_alloc);
    CHECK(n > 0 && by_alloc == n, "%d collections by allocation of %d", by_alloc, n);
    int resizes = 0;
    for (int i = 0; i < nevents; i++) resizes += events[i].kind == MOSAIC_EVENT_HEAP_RESIZE;
    /* Each came once the allowance (at least 256 KiB here) was used up,
     * and each end sets the next target above what is live. */
    for (int i = before; i < nevents; i++) {
        if (events[i].kind == MOSAIC_EVENT_COLLECTION_START)
            CHECK(events[i].allocated_bytes >= (256u << 10) && events[i].target_bytes >= (256u << 10),
                  "allocated %llu of target %zu", (unsigned long long)events[i].allocated_bytes,
                  events[i].target_bytes);
        if (events[i].kind == MOSAIC_EVENT_COLLECTION_END)
            CHECK(events[i].target_bytes >= 2 * events[i].live_bytes && events[i].allocation_rate > 0,
                  "target %zu for %llu live", events[i].target_bytes, (unsigned long long)events[i].live_bytes);
    }
    CHECK(resizes > 0, "no HEAP_RESIZE while the heap grew");

    /* The callback may not allocate or collect; the collection completes. */
    try_alloc = 1;
    mosaic_collect(m);
    CHECK(alloc_result == NULL && alloc_error == MOSAIC_ERR_MISUSE, "allocating in the event callback: %p, %d",
          alloc_result, (int)alloc_error);
    CHECK(collect_error == MOSAIC_ERR_MISUSE, "collecting in the event callback: %d", (int)collect_error);
    CHECK(mosaic_last_error() == MOSAIC_OK, "the collection itself succeeded");
    CHECK(events[nevents - 1].kind == MOSAIC_EVENT_COLLECTION_END, "the collection completed");

    /* Removed: no more events. */
    CHECK(mosaic_set_event_callback(h, NULL, NULL) == MOSAIC_OK, "remove");
    before = nevents;
    mosaic_collect(m);
    CHECK(nevents == before, "events after removal");
    mosaic_root_free(keep);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);

    /* Stress mode's collections say so. */
    c.stress = 1000;
    h = mosaic_heap_new(&c, &e);
    m = main_m = mosaic_mutator_new(h);
    nevents = 0;
    mosaic_set_event_callback(h, on_event, &nevents);
    for (int i = 0; i < 100000; i++) mosaic_alloc(m, sizeof(Obj), 0);
    int stressed;
    n = check_collections(0, 1, MOSAIC_REASON_STRESS, &stressed);
    CHECK(n >= 10 && stressed >= 10, "%d collections, %d by stress", n, stressed);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
