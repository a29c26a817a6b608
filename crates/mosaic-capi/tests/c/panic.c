/* A Rust panic cannot cross into C: verify mode's diagnostic on a corrupt
 * heap (a field holding an interior pointer) aborts the process with the
 * message, from inside mosaic_collect. */
#include <stdint.h>
#include <stdio.h>

#include "mosaic.h"

typedef struct Pair {
    struct Pair *next;
    uint64_t payload[3];
} Pair;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Pair *)obj)->next);
}

int main(void) {
    mosaic_embedder e = {.trace = trace};
    mosaic_config c;
    mosaic_config_default(&c);
    c.verify = true;
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    mosaic_mutator *m = mosaic_mutator_new(h);
    Pair *a = mosaic_alloc(m, sizeof(Pair), 0);
    mosaic_root *r = mosaic_root_new(m, a);
    Pair *b = mosaic_alloc(m, sizeof(Pair), 0);
    a->next = (Pair *)((char *)b + 8); /* not the start of an object */
    printf("collecting\n");
    fflush(stdout);
    mosaic_collect(m);
    printf("survived\n");
    mosaic_root_free(r);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    return 0;
}
