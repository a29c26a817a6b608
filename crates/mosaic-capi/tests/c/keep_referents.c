/* MOSAIC_KEEP_REFERENTS: a dead cleanup object's on_free reads what it
 * references, intact, in the collection that finds it dead (verify mode,
 * every collection moving what it may); without the flag the referent dies
 * with it; a chain of keepers loses a link per collection. */
#include <stdint.h>
#include <stdio.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

enum { KEEPER = 1000 };

static uint64_t seen[8];
static int nseen;

/* A keeper's on_free: record the id of what it references (0: none). */
static void on_free(void *ctx, void *obj) {
    (void)ctx;
    Obj *o = obj;
    if (o->id >= KEEPER && nseen < 8) seen[nseen++] = o->ref ? o->ref->id : 0;
}

static mosaic_embedder embedder = {.trace = trace_obj, .on_free = on_free};

static Obj *new_with(mosaic_mutator *m, uint64_t id, Obj *ref, uint32_t flags) {
    Obj *o = mosaic_alloc(m, sizeof(Obj), flags);
    CHECK(o != NULL, "alloc: %s", mosaic_last_error_message());
    if (o) {
        o->id = id;
        o->ref = ref;
    }
    return o;
}

static void collect(mosaic_mutator *m) {
    mosaic_collect(m);
    mosaic_finish_sweep(m);
}

int main(void) {
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    c.verify_compaction = true;
    mosaic_heap *h = mosaic_heap_new(&c, &embedder);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(h);
    const uint32_t keep = MOSAIC_NEEDS_CLEANUP | MOSAIC_KEEP_REFERENTS;

    /* keeper -> 7; only the keeper refers to 7. */
    mosaic_root *r = mosaic_root_new(m, new_with(m, 7, NULL, 0));
    Obj *k = new_with(m, KEEPER, mosaic_root_get(r), keep);
    mosaic_root_set(r, k);
    collect(m);
    CHECK(nseen == 0, "a live keeper's on_free ran");
    mosaic_root_set(r, NULL);
    collect(m);
    CHECK(nseen == 1 && seen[0] == 7, "on_free read %llu (%d calls), expected 7",
          (unsigned long long)seen[0], nseen);
    mosaic_stats s;
    mosaic_heap_stats(h, &s);
    CHECK(s.live_objects == 1, "%zu live, expected 1 (the referent)", (size_t)s.live_objects);
    collect(m);
    mosaic_heap_stats(h, &s);
    CHECK(s.live_objects == 0, "%zu live after the next collection", (size_t)s.live_objects);

    /* A chain: keeper 1002 -> keeper 1001 -> 9. */
    nseen = 0;
    mosaic_root_set(r, new_with(m, 9, NULL, 0));
    mosaic_root_set(r, new_with(m, KEEPER + 1, mosaic_root_get(r), keep));
    mosaic_root_set(r, new_with(m, KEEPER + 2, mosaic_root_get(r), keep));
    mosaic_root_set(r, NULL);
    collect(m);
    CHECK(nseen == 1 && seen[0] == KEEPER + 1, "first link: %d calls, read %llu", nseen,
          (unsigned long long)seen[0]);
    collect(m);
    CHECK(nseen == 2 && seen[1] == 9, "second link: %d calls, read %llu", nseen,
          (unsigned long long)seen[1]);

    /* Without the flag: the referent goes in the same collection. */
    mosaic_root_set(r, new_with(m, 11, NULL, 0));
    mosaic_root_set(r, new_with(m, 12, mosaic_root_get(r), MOSAIC_NEEDS_CLEANUP));
    mosaic_root_set(r, NULL);
    collect(m);
    collect(m);
    mosaic_heap_stats(h, &s);
    CHECK(s.live_objects == 0, "%zu live without the flag", (size_t)s.live_objects);

    mosaic_root_free(r);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
