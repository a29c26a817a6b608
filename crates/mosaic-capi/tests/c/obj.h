/* The C tests' common object: one traced reference and an id. Include
 * after mosaic.h and check.h; the embedder's trace is trace_obj. */
#ifndef MOSAIC_TEST_OBJ_H
#define MOSAIC_TEST_OBJ_H
#include <stdint.h>

typedef struct Obj {
    struct Obj *ref;
    uint64_t id;
} Obj;

static inline void trace_obj(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Obj *)obj)->ref);
}

/* A new object with this id (failure is counted). */
static inline Obj *new_obj(mosaic_mutator *m, uint64_t id) {
    Obj *o = mosaic_alloc(m, sizeof(Obj), 0);
    CHECK(o != NULL, "alloc: %s", mosaic_last_error_message());
    if (o) o->id = id;
    return o;
}
#endif
