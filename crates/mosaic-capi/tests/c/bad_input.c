/* Bad input to the functions added for finalizers, weak references,
 * ephemerons, events, scopes, blocking regions, aligned allocation and
 * per-mutator data: each is an error code (and a message naming the
 * function), never a crash, and the heap keeps working. Includes
 * collector callbacks that try to allocate, collect, run finalizers, park
 * or block. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"


static mosaic_mutator *main_m;
static int misbehave;
static struct {
    void *alloc;
    mosaic_error alloc_error, aligned_error, collect_error, finalizers_error, safepoint_error, enter_error,
        blocking_error, ephemeron_error, sweep_error;
    int blocking_ran;
} in_trace;

static void set_flag(void *arg) { *(int *)arg = 1; }

/* The first trace call of a collection with `misbehave` set tries what a
 * callback may not do; each attempt is refused. */
static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    trace_obj(ctx, obj, t);
    if (!misbehave) return;
    misbehave = 0;
    in_trace.alloc = mosaic_alloc(main_m, 16, 0);
    in_trace.alloc_error = mosaic_last_error();
    mosaic_alloc_aligned(main_m, 16, 64, 0);
    in_trace.aligned_error = mosaic_last_error();
    mosaic_collect(main_m);
    in_trace.collect_error = mosaic_last_error();
    mosaic_run_finalizers(main_m);
    in_trace.finalizers_error = mosaic_last_error();
    mosaic_safepoint(main_m);
    in_trace.safepoint_error = mosaic_last_error();
    mosaic_blocking_enter(main_m);
    in_trace.enter_error = mosaic_last_error();
    mosaic_blocking(main_m, set_flag, &in_trace.blocking_ran);
    in_trace.blocking_error = mosaic_last_error();
    mosaic_ephemeron_new(main_m, NULL, NULL);
    in_trace.ephemeron_error = mosaic_last_error();
    mosaic_finish_sweep(main_m);
    in_trace.sweep_error = mosaic_last_error();
}

static void fin(mosaic_mutator *m, void *obj, void *data) {
    (void)m;
    (void)obj;
    (void)data;
}

static void on_event(void *ctx, const mosaic_event *ev) {
    (void)ctx;
    (void)ev;
}

static void notify(void *ctx) { (void)ctx; }

static Obj global_obj;

static void null_handles(void) {
    int local = 0;
    void *slot = NULL;
    CHECK(mosaic_register_finalizer(NULL, &local, fin, NULL, MOSAIC_FINALIZE_ORDERED) == MOSAIC_ERR_INVALID_ARGUMENT,
          "register_finalizer(NULL)");
    EXPECT_INVALID("mosaic_register_finalizer");
    CHECK(!mosaic_unregister_finalizer(NULL, &local), "unregister_finalizer(NULL)");
    EXPECT_INVALID("mosaic_unregister_finalizer");
    CHECK(mosaic_run_finalizers(NULL) == 0, "run_finalizers(NULL)");
    EXPECT_INVALID("mosaic_run_finalizers");
    CHECK(mosaic_pending_finalizers(NULL) == 0, "pending_finalizers(NULL)");
    EXPECT_INVALID("mosaic_pending_finalizers");
    CHECK(mosaic_set_finalizer_notifier(NULL, notify, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "notifier(NULL)");
    EXPECT_INVALID("mosaic_set_finalizer_notifier");
    CHECK(mosaic_start_finalizer_thread(NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "finalizer thread(NULL)");
    EXPECT_INVALID("mosaic_start_finalizer_thread");
    CHECK(mosaic_weak_new(NULL, &local, MOSAIC_WEAK_SHORT) == NULL, "weak_new(NULL)");
    EXPECT_INVALID("mosaic_weak_new");
    CHECK(mosaic_weak_get(NULL) == NULL, "weak_get(NULL)");
    EXPECT_INVALID("mosaic_weak_get");
    CHECK(mosaic_register_weak_slot(NULL, &slot, MOSAIC_WEAK_SHORT) == MOSAIC_ERR_INVALID_ARGUMENT, "slot(NULL)");
    EXPECT_INVALID("mosaic_register_weak_slot");
    CHECK(!mosaic_unregister_weak_slot(NULL, &slot), "unregister_weak_slot(NULL)");
    EXPECT_INVALID("mosaic_unregister_weak_slot");
    CHECK(mosaic_ephemeron_new(NULL, NULL, NULL) == NULL, "ephemeron_new(NULL)");
    EXPECT_INVALID("mosaic_ephemeron_new");
    CHECK(mosaic_ephemeron_key(NULL, &local) == NULL, "ephemeron_key(NULL)");
    EXPECT_INVALID("mosaic_ephemeron_key");
    CHECK(mosaic_ephemeron_value(NULL, &local) == NULL, "ephemeron_value(NULL)");
    EXPECT_INVALID("mosaic_ephemeron_value");
    CHECK(mosaic_ephemeron_set(NULL, &local, NULL, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "ephemeron_set(NULL)");
    EXPECT_INVALID("mosaic_ephemeron_set");
    CHECK(mosaic_set_event_callback(NULL, on_event, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "event callback(NULL)");
    EXPECT_INVALID("mosaic_set_event_callback");
    CHECK(mosaic_mutator_set_data(NULL, &local) == MOSAIC_ERR_INVALID_ARGUMENT, "set_data(NULL)");
    EXPECT_INVALID("mosaic_mutator_set_data");
    CHECK(mosaic_mutator_data(NULL) == NULL, "data(NULL)");
    EXPECT_INVALID("mosaic_mutator_data");
    CHECK(mosaic_scope_open(NULL) == 0, "scope_open(NULL)");
    EXPECT_INVALID("mosaic_scope_open");
    CHECK(mosaic_scope_add(NULL, &slot) == MOSAIC_ERR_INVALID_ARGUMENT, "scope_add(NULL)");
    EXPECT_INVALID("mosaic_scope_add");
    CHECK(mosaic_scope_close(NULL, 0) == MOSAIC_ERR_INVALID_ARGUMENT, "scope_close(NULL)");
    EXPECT_INVALID("mosaic_scope_close");
    CHECK(mosaic_blocking_enter(NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "blocking_enter(NULL)");
    EXPECT_INVALID("mosaic_blocking_enter");
    CHECK(mosaic_blocking_leave(NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "blocking_leave(NULL)");
    EXPECT_INVALID("mosaic_blocking_leave");
    CHECK(mosaic_alloc_aligned(NULL, 16, 16, 0) == NULL, "alloc_aligned(NULL)");
    EXPECT_INVALID("mosaic_alloc_aligned");
    mosaic_weak_free(NULL); /* ignored, like free() */
}

static void finalizers(mosaic_heap *h, mosaic_mutator *m) {
    Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
    mosaic_root *r = mosaic_root_new(m, o);
    int local = 0;
    CHECK(mosaic_register_finalizer(m, o, fin, NULL, MOSAIC_FINALIZE_ORDERED) == MOSAIC_OK, "first registration");
    CHECK(mosaic_register_finalizer(m, o, fin, NULL, MOSAIC_FINALIZE_UNORDERED) == MOSAIC_ERR_ALREADY_REGISTERED,
          "registered twice");
    EXPECT_ERROR(MOSAIC_ERR_ALREADY_REGISTERED, "mosaic_register_finalizer");
    CHECK(strstr(mosaic_last_error_message(), "already has a finalizer") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_register_finalizer(m, &local, fin, NULL, MOSAIC_FINALIZE_ORDERED) == MOSAIC_ERR_FOREIGN_POINTER,
          "finalizer on a stack object");
    EXPECT_ERROR(MOSAIC_ERR_FOREIGN_POINTER, "mosaic_register_finalizer");
    CHECK(mosaic_register_finalizer(m, (char *)o + 8, fin, NULL, 0) == MOSAIC_ERR_FOREIGN_POINTER, "interior");
    CHECK(mosaic_register_finalizer(m, NULL, fin, NULL, 0) == MOSAIC_ERR_INVALID_ARGUMENT, "NULL object");
    EXPECT_INVALID("mosaic_register_finalizer");
    CHECK(mosaic_register_finalizer(m, o, NULL, NULL, 0) == MOSAIC_ERR_INVALID_ARGUMENT, "NULL finalizer");
    EXPECT_INVALID("mosaic_register_finalizer");
    CHECK(mosaic_register_finalizer(m, o, fin, NULL, 7) == MOSAIC_ERR_INVALID_ARGUMENT, "order 7");
    CHECK(strstr(mosaic_last_error_message(), "unknown finalizer order 7") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(!mosaic_unregister_finalizer(m, &local) && mosaic_last_error() == MOSAIC_OK, "unregister a stack object");
    CHECK(mosaic_unregister_finalizer(m, o), "unregister");
    mosaic_root_free(r);
    CHECK(mosaic_start_finalizer_thread(h) == MOSAIC_OK, "start");
    CHECK(mosaic_start_finalizer_thread(h) == MOSAIC_ERR_MISUSE, "started twice");
    EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_start_finalizer_thread");
}

static void weak(mosaic_mutator *m) {
    int local = 0;
    Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
    mosaic_root *r = mosaic_root_new(m, o);
    CHECK(mosaic_weak_new(m, &local, MOSAIC_WEAK_SHORT) == NULL, "weak on a stack object");
    EXPECT_ERROR(MOSAIC_ERR_FOREIGN_POINTER, "mosaic_weak_new");
    CHECK(mosaic_weak_new(m, NULL, MOSAIC_WEAK_SHORT) == NULL, "weak on NULL");
    EXPECT_INVALID("mosaic_weak_new");
    CHECK(mosaic_weak_new(m, o, 9) == NULL, "weak kind 9");
    EXPECT_INVALID("mosaic_weak_new");
    mosaic_weak *w = mosaic_weak_new(m, o, MOSAIC_WEAK_LONG);
    mosaic_weak_free(w);
    CHECK(mosaic_last_error() == MOSAIC_OK, "first free");
    mosaic_weak_free(w);
    EXPECT_INVALID("mosaic_weak_free");
    CHECK(strstr(mosaic_last_error_message(), "weak handle was already freed") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_weak_get(w) == NULL, "get on a freed handle");
    EXPECT_INVALID("mosaic_weak_get");

    void *stack_slot = NULL;
    CHECK(mosaic_register_weak_slot(m, &stack_slot, MOSAIC_WEAK_SHORT) == MOSAIC_ERR_INVALID_ARGUMENT, "stack slot");
    EXPECT_INVALID("mosaic_register_weak_slot");
    CHECK(strstr(mosaic_last_error_message(), "not inside a live object") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_register_weak_slot(m, (void **)&global_obj.ref, MOSAIC_WEAK_LONG) == MOSAIC_ERR_INVALID_ARGUMENT,
          "global slot");
    CHECK(mosaic_register_weak_slot(m, (void **)((char *)o + 4), MOSAIC_WEAK_SHORT) == MOSAIC_ERR_INVALID_ARGUMENT,
          "misaligned slot");
    CHECK(strstr(mosaic_last_error_message(), "not aligned") != NULL, "message: %s", mosaic_last_error_message());
    CHECK(mosaic_register_weak_slot(m, (void **)&o->ref, 2) == MOSAIC_ERR_INVALID_ARGUMENT, "kind 2");
    CHECK(mosaic_register_weak_slot(m, (void **)&o->ref, MOSAIC_WEAK_SHORT) == MOSAIC_OK, "register");
    CHECK(mosaic_register_weak_slot(m, (void **)&o->ref, MOSAIC_WEAK_LONG) == MOSAIC_ERR_ALREADY_REGISTERED, "twice");
    EXPECT_ERROR(MOSAIC_ERR_ALREADY_REGISTERED, "mosaic_register_weak_slot");
    CHECK(mosaic_unregister_weak_slot(m, (void **)&o->ref), "unregister");
    mosaic_root_free(r);
}

static void ephemerons(mosaic_heap *h, mosaic_mutator *m) {
    int local = 0;
    Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
    mosaic_root *r = mosaic_root_new(m, o);
    CHECK(mosaic_ephemeron_new(m, &local, o) == NULL, "key on the stack");
    EXPECT_INVALID("mosaic_ephemeron_new");
    CHECK(strstr(mosaic_last_error_message(), "not an object of this heap") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_ephemeron_new(m, &global_obj, NULL) == NULL, "global key");
    EXPECT_INVALID("mosaic_ephemeron_new");
    CHECK(mosaic_ephemeron_key(h, o) == NULL, "key of a plain object");
    EXPECT_INVALID("mosaic_ephemeron_key");
    CHECK(mosaic_ephemeron_value(h, &local) == NULL, "value of a stack address");
    EXPECT_INVALID("mosaic_ephemeron_value");
    CHECK(mosaic_ephemeron_set(m, o, NULL, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "set on a plain object");
    EXPECT_INVALID("mosaic_ephemeron_set");
    void *e = mosaic_ephemeron_new(m, o, o);
    mosaic_root *re = mosaic_root_new(m, e);
    CHECK(mosaic_ephemeron_set(m, e, &local, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "set a stack key");
    CHECK(mosaic_ephemeron_key(h, e) == o && mosaic_ephemeron_value(h, e) == o, "a refused set changes nothing");
    mosaic_root_free(re);
    mosaic_root_free(r);
}

static void alignment_and_flags(mosaic_mutator *m) {
    static const size_t bad[] = {0, 3, 24, 100, 131072, (size_t)1 << 40};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(mosaic_alloc_aligned(m, 16, bad[i], 0) == NULL, "alignment %zu accepted", bad[i]);
        EXPECT_INVALID("mosaic_alloc_aligned");
    }
    CHECK(strstr(mosaic_last_error_message(), "not a power of two between 1 and 65536") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_alloc_aligned(m, 16, 64, 0x80) == NULL, "bad flags");
    EXPECT_INVALID("mosaic_alloc_aligned");
    CHECK(mosaic_alloc_aligned(m, SIZE_MAX, 64, 0) == NULL, "SIZE_MAX");
    EXPECT_ERROR(MOSAIC_ERR_TOO_LARGE, "mosaic_alloc_aligned");
}

static void scope_and_blocking(mosaic_mutator *m) {
    void *slots[2];
    CHECK(mosaic_scope_add(m, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "NULL slot");
    EXPECT_INVALID("mosaic_scope_add");
    CHECK(mosaic_scope_add(m, (void **)((char *)slots + 1)) == MOSAIC_ERR_INVALID_ARGUMENT, "misaligned slot");
    size_t d = mosaic_scope_open(m);
    CHECK(mosaic_scope_close(m, d + 1) == MOSAIC_ERR_INVALID_ARGUMENT, "close too deep");
    EXPECT_INVALID("mosaic_scope_close");
    CHECK(mosaic_blocking_leave(m) == MOSAIC_ERR_MISUSE, "leave without enter");
    EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_blocking_leave");
    CHECK(strstr(mosaic_last_error_message(), "leave_blocking without enter_blocking") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "enter");
    CHECK(mosaic_blocking_enter(m) == MOSAIC_ERR_MISUSE, "enter twice");
    EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_blocking_enter");
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "leave");
}

/* Collector callbacks that misbehave are refused; the collection completes
 * and the heap works on. */
static void misbehaving_trace(mosaic_heap *h, mosaic_mutator *m) {
    mosaic_root *list = mosaic_root_new(m, NULL);
    for (int i = 0; i < 1000; i++) {
        Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
        o->id = (uint64_t)i;
        o->ref = mosaic_root_get(list);
        mosaic_root_set(list, o);
    }
    misbehave = 1;
    mosaic_collect(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "the collection succeeded: %s", mosaic_last_error_message());
    CHECK(misbehave == 0, "trace ran");
    CHECK(in_trace.alloc == NULL && in_trace.alloc_error == MOSAIC_ERR_MISUSE, "alloc in trace: %p %d", in_trace.alloc,
          (int)in_trace.alloc_error);
    CHECK(in_trace.aligned_error == MOSAIC_ERR_MISUSE, "alloc_aligned in trace: %d", (int)in_trace.aligned_error);
    CHECK(in_trace.collect_error == MOSAIC_ERR_MISUSE, "collect in trace: %d", (int)in_trace.collect_error);
    CHECK(in_trace.finalizers_error == MOSAIC_ERR_MISUSE, "run_finalizers in trace: %d",
          (int)in_trace.finalizers_error);
    CHECK(in_trace.safepoint_error == MOSAIC_ERR_MISUSE, "safepoint in trace: %d", (int)in_trace.safepoint_error);
    CHECK(in_trace.enter_error == MOSAIC_ERR_MISUSE, "blocking_enter in trace: %d", (int)in_trace.enter_error);
    CHECK(in_trace.blocking_error == MOSAIC_ERR_MISUSE && !in_trace.blocking_ran, "mosaic_blocking in trace: %d",
          (int)in_trace.blocking_error);
    CHECK(in_trace.ephemeron_error == MOSAIC_ERR_MISUSE, "ephemeron_new in trace: %d", (int)in_trace.ephemeron_error);
    CHECK(in_trace.sweep_error == MOSAIC_ERR_MISUSE, "finish_sweep in trace: %d", (int)in_trace.sweep_error);
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 1000, "marked %llu", (unsigned long long)st.last_marked);
    /* The heap works on. */
    for (int i = 0; i < 100000; i++) CHECK(mosaic_alloc(m, sizeof(Obj), 0) != NULL || i > 0, "alloc after");
    mosaic_collect(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "collect after");
    uint64_t k = 1000;
    for (Obj *o = mosaic_root_get(list); o; o = o->ref) CHECK(o->id == --k, "list damaged at %llu", (unsigned long long)k);
    CHECK(k == 0, "list length");
    mosaic_root_free(list);
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace};
    mosaic_heap *h = verified_heap(&e);
    mosaic_mutator *m = main_m = mosaic_mutator_new(h);

    null_handles();
    finalizers(h, m);
    weak(m);
    ephemerons(h, m);
    alignment_and_flags(m);
    scope_and_blocking(m);
    misbehaving_trace(h, m);

    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
