/* A minimal C embedder: cons cells and strings, a global root, a
 * collection, and a check that the live list survived intact. The
 * configuration comes from mosaic_config_from_env, so every MOSAIC_*
 * variable (MOSAIC_MAX_HEAP, MOSAIC_STRESS, ...) applies.
 *
 *   cc -Iinclude examples/c/minimal.c target/release/libmosaic.a \
 *      -lpthread -ldl -lm -lrt -lutil -lgcc_s -o minimal && ./minimal
 *
 * (after scripts/install-capi.sh, the pkg-config lines in README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mosaic.h"

enum { CONS = 1, STRING = 2 };

typedef struct Cons {
    int tag; /* CONS */
    long value;
    struct Cons *car; /* reference fields */
    struct Cons *cdr;
} Cons;

typedef struct {
    int tag; /* STRING; allocated MOSAIC_NO_POINTERS, never traced */
    char text[32];
} String;

static Cons *global_list; /* a root the runtime owns */
static int strings_freed;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    Cons *c = obj;
    if (c->tag == CONS) {
        mosaic_visit(t, (void **)&c->car);
        mosaic_visit(t, (void **)&c->cdr);
    }
}

static void roots(void *ctx, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&global_list);
}

static void on_free(void *ctx, void *obj) {
    (void)ctx;
    (void)obj;
    strings_freed++;
}

static Cons *cons(mosaic_mutator *m, long value, Cons *car, Cons *cdr) {
    Cons *c = mosaic_alloc(m, sizeof(Cons), 0);
    if (!c) {
        fprintf(stderr, "alloc failed: %s\n", mosaic_last_error_message());
        exit(1);
    }
    c->tag = CONS;
    c->value = value;
    c->car = car;
    c->cdr = cdr;
    return c;
}

int main(void) {
    mosaic_embedder e = {.trace = trace, .roots = roots, .on_free = on_free, .ctx = NULL};
    /* Defaults overridden by MOSAIC_* variables; adjust fields after this
     * only where the program knows better than its user. */
    mosaic_config config;
    if (mosaic_config_from_env(&config) != MOSAIC_OK) {
        fprintf(stderr, "%s\n", mosaic_last_error_message());
        return 1;
    }
    mosaic_heap *heap = mosaic_heap_new(&config, &e);
    if (!heap) {
        fprintf(stderr, "heap: %s\n", mosaic_last_error_message());
        return 1;
    }
    mosaic_mutator *m = mosaic_mutator_new(heap);

    /* A 1000-element list reachable from the global root, each cell
     * carrying a string; plus 100000 garbage cells. Any allocation may
     * collect, and the collector sees only what the roots reach: link the
     * new cell into the list first, then allocate its string. */
    for (long i = 0; i < 1000; i++) {
        global_list = cons(m, i, NULL, global_list);
        String *s = mosaic_alloc(m, sizeof(String), MOSAIC_NO_POINTERS | MOSAIC_NEEDS_CLEANUP);
        if (!s) {
            fprintf(stderr, "alloc failed: %s\n", mosaic_last_error_message());
            return 1;
        }
        s->tag = STRING;
        snprintf(s->text, sizeof s->text, "item %ld", i);
        global_list->car = (Cons *)s;
        cons(m, -i, NULL, NULL); /* garbage */
    }
    for (long i = 0; i < 100000; i++) cons(m, i, NULL, NULL);
    /* A string nobody references dies and is cleaned up. */
    mosaic_alloc(m, sizeof(String), MOSAIC_NO_POINTERS | MOSAIC_NEEDS_CLEANUP);

    mosaic_collect(m);
    mosaic_finish_sweep(m);

    long n = 1000, bad = 0;
    for (Cons *c = global_list; c; c = c->cdr) {
        char want[32];
        snprintf(want, sizeof want, "item %ld", --n);
        if (c->value != n || strcmp(((String *)c->car)->text, want) != 0) bad++;
    }
    mosaic_stats st;
    mosaic_heap_stats(heap, &st);
    char line[512];
    mosaic_stats_summary(heap, line, sizeof line);
    printf("%s\n", line);
    printf("list ok: %s, live objects: %llu, strings freed: %d\n", (n == 0 && bad == 0) ? "yes" : "no",
           (unsigned long long)st.live_objects, strings_freed);

    int ok = n == 0 && bad == 0 && st.live_objects == 2000 && strings_freed == 1;

    /* Freeing the last handles runs on_free for the 1000 live strings. */
    mosaic_mutator_free(m);
    mosaic_heap_free(heap);
    printf("strings freed after the heap is gone: %d\n", strings_freed);
    return ok && strings_freed == 1001 ? 0 : 1;
}
