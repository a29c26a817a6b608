/* Generational mode from C: objects allocated MOSAIC_BARRIERED and stored
 * into with mosaic_write_barrier_inline survive minor collections with
 * their contents; unbarriered objects are rescanned; mosaic_copy_refs
 * covers a bulk copy; a minor collection marks only the young objects it
 * keeps (the MARK_END event says minor), and the stats count minor and
 * full collections. Run in verify mode too (argv[1] == "verify"): every
 * minor collection is then proven by a full walk. Prints ns per barrier
 * on an old, already logged object (the fast path's cost). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

enum { FIELDS = 64 };
typedef struct Vec {
    Obj *f[FIELDS];
} Vec;

/* Objects of two layouts: an Obj (16 bytes) or a Vec (512 bytes). */
static void trace_any(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_heap *h = *(mosaic_heap **)ctx;
    if (mosaic_object_size(h, obj) >= sizeof(Vec)) {
        for (int i = 0; i < FIELDS; i++) mosaic_visit(t, (void **)&((Vec *)obj)->f[i]);
    } else {
        trace_obj(NULL, obj, t);
    }
}

static unsigned minor_marks, minor_ends;
static void on_event(void *ctx, const mosaic_event *ev) {
    (void)ctx;
    if (ev->kind == MOSAIC_EVENT_MARK_END && ev->minor) {
        minor_ends++;
        minor_marks += (unsigned)ev->marked_objects;
    }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    alarm(120);
    static mosaic_heap *heap;
    mosaic_embedder e = {.trace = trace_any, .ctx = &heap};
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 256u << 20;
    c.heap_min = 1u << 20;
    c.generational = true;
    c.gc_threads = 1;
    c.verify = argc > 1 && strcmp(argv[1], "verify") == 0;
    heap = mosaic_heap_new(&c, &e);
    CHECK(heap != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_set_event_callback(heap, on_event, NULL);
    mosaic_mutator *m = mosaic_mutator_new(heap);
    const mosaic_fast_path *fp = mosaic_mutator_fast_path(m);

    Vec *v = mosaic_alloc(m, sizeof(Vec), MOSAIC_BARRIERED);
    Obj *plain = mosaic_alloc(m, sizeof(Obj), 0);
    mosaic_root *rv = mosaic_root_new(m, v), *rp = mosaic_root_new(m, plain);
    mosaic_collect(m); /* both are old now */

    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < FIELDS; i++) {
            Obj *o = mosaic_alloc_inline(m, fp, sizeof(Obj));
            o->id = (uint64_t)(round * 1000 + i);
            v->f[i] = o;
            mosaic_write_barrier_inline(m, fp, v);
        }
        /* The unbarriered object needs none: it is rescanned. */
        Obj *young = new_obj(m, 77 + round);
        plain->ref = young;
        for (int g = 0; g < 20000; g++) mosaic_alloc_inline(m, fp, 48); /* garbage */
        unsigned before = minor_marks;
        mosaic_collect_young(m);
        CHECK(minor_marks - before == FIELDS + 1, "round %d: the minor collection kept %u young objects",
              round, minor_marks - before);
        for (int i = 0; i < FIELDS; i++)
            CHECK(v->f[i]->id == (uint64_t)(round * 1000 + i), "field %d after round %d", i, round);
        CHECK(plain->ref->id == (uint64_t)(77 + round), "unbarriered object's field");
    }

    /* A bulk copy into the old vector, with one barrier. */
    Obj *fresh[FIELDS];
    for (int i = 0; i < FIELDS; i++) {
        fresh[i] = mosaic_alloc_inline(m, fp, sizeof(Obj));
        fresh[i]->id = 5000 + i;
    }
    mosaic_copy_refs(m, v, (void **)v->f, (void *const *)fresh, FIELDS);
    memset(fresh, 0, sizeof fresh);
    for (int g = 0; g < 20000; g++) mosaic_alloc_inline(m, fp, 48);
    mosaic_collect_young(m);
    for (int i = 0; i < FIELDS; i++) CHECK(v->f[i]->id == (uint64_t)(5000 + i), "copied field %d", i);

    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    CHECK(st.minor_collections == 6 && minor_ends == 6, "minor collections %llu, events %u",
          (unsigned long long)st.minor_collections, minor_ends);
    CHECK(st.full_collections == 1, "full collections %llu", (unsigned long long)st.full_collections);
    CHECK(st.remembered_objects == 6, "remembered %llu", (unsigned long long)st.remembered_objects);
    CHECK(st.rescanned_objects >= 6, "rescanned %llu", (unsigned long long)st.rescanned_objects);

    if (!c.verify) {
        /* The fast path's cost on an old object already logged. */
        mosaic_write_barrier_inline(m, fp, v);
        enum { N = 50000000 };
        double t0 = now_ns();
        for (int i = 0; i < N; i++) {
            v->f[i & (FIELDS - 1)] = v->f[(i + 1) & (FIELDS - 1)];
            mosaic_write_barrier_inline(m, fp, v);
        }
        double t1 = now_ns();
        for (int i = 0; i < N; i++) v->f[i & (FIELDS - 1)] = v->f[(i + 1) & (FIELDS - 1)];
        __asm__ volatile("" ::: "memory");
        double t2 = now_ns();
        printf("ns/store with barrier %.2f, without %.2f\n", (t1 - t0) / N, (t2 - t1) / N);
    }
    mosaic_root_free(rv);
    mosaic_root_free(rp);
    mosaic_mutator_free(m);
    mosaic_heap_free(heap);
    printf("%d failures\n", failures);
    return failures != 0;
}
