/* The scope: slots added with mosaic_scope_add keep their objects alive
 * across collections until their scope is closed; scopes nest; depths are
 * reported; a slot may hold NULL or a pointer outside the heap; thousands
 * of slots work; closing too deep is an error. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

static uint64_t marked(mosaic_heap *h) {
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    return st.last_marked;
}

static void churn(mosaic_mutator *m) {
    for (int i = 0; i < 50000; i++) mosaic_alloc(m, sizeof(Obj), 0);
    mosaic_collect(m);
}

static Obj outside = {.id = 5};

/* A recursive function keeping one local per frame in the scope. */
static uint64_t build(mosaic_mutator *m, int depth) {
    size_t d = mosaic_scope_open(m);
    Obj *mine = NULL;
    CHECK(mosaic_scope_add(m, (void **)&mine) == MOSAIC_OK, "add in frame %d", depth);
    mine = mosaic_alloc(m, sizeof(Obj), 0);
    mine->id = (uint64_t)depth;
    uint64_t sum = depth > 0 ? build(m, depth - 1) : 0;
    if (depth % 100 == 0) churn(m); /* collect with every frame's local in the scope */
    CHECK(mine->id == (uint64_t)depth, "frame %d's object", depth);
    CHECK(mosaic_scope_close(m, d) == MOSAIC_OK, "close frame %d", depth);
    return sum + mine->id;
}

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_heap *h = verified_heap(&e);
    mosaic_mutator *m = mosaic_mutator_new(h);

    size_t outer = mosaic_scope_open(m);
    CHECK(outer == 0 && mosaic_last_error() == MOSAIC_OK, "empty scope depth %zu", outer);
    Obj *a = NULL, *b = NULL, *none = NULL, *out = &outside;
    CHECK(mosaic_scope_add(m, (void **)&a) == MOSAIC_OK && mosaic_last_error() == MOSAIC_OK, "add a");
    CHECK(mosaic_scope_add(m, (void **)&b) == MOSAIC_OK, "add b");
    CHECK(mosaic_scope_add(m, (void **)&none) == MOSAIC_OK, "add a NULL slot");
    CHECK(mosaic_scope_add(m, (void **)&out) == MOSAIC_OK, "add a slot pointing outside the heap");
    CHECK(mosaic_scope_open(m) == 4, "depth 4");
    a = mosaic_alloc(m, sizeof(Obj), 0); /* assigned after adding: the slot is read at each collection */
    a->id = 1;
    b = mosaic_alloc(m, sizeof(Obj), 0);
    b->id = 2;
    b->ref = a;
    churn(m);
    CHECK(a->id == 1 && b->id == 2 && b->ref == a && out == &outside && none == NULL, "scope objects intact");
    CHECK(marked(h) == 2, "marked %llu", (unsigned long long)marked(h));

    /* A nested scope: closed, its object dies; the outer ones stay. */
    size_t inner = mosaic_scope_open(m);
    Obj *tmp = mosaic_alloc(m, sizeof(Obj), 0);
    tmp->id = 3;
    mosaic_scope_add(m, (void **)&tmp);
    mosaic_weak *wt = mosaic_weak_new(m, tmp, MOSAIC_WEAK_SHORT);
    churn(m);
    CHECK(mosaic_weak_get(wt) == tmp && tmp->id == 3 && marked(h) == 3, "inner scope object alive");
    CHECK(mosaic_scope_close(m, inner) == MOSAIC_OK && mosaic_scope_open(m) == inner, "close inner");
    churn(m);
    CHECK(mosaic_weak_get(wt) == NULL && marked(h) == 2, "closed slot still visited");
    mosaic_weak_free(wt);
    CHECK(mosaic_scope_close(m, inner + 1) == MOSAIC_ERR_INVALID_ARGUMENT, "closing deeper than the scope");
    CHECK(mosaic_scope_open(m) == inner, "a bad close changes nothing");

    /* Deep recursion: 1000 frames, far beyond the 256 reserved slots. */
    CHECK(build(m, 999) == 999 * 1000 / 2, "sum of the frames' ids");
    CHECK(mosaic_scope_open(m) == inner, "recursion closed its frames");

    CHECK(mosaic_scope_close(m, outer) == MOSAIC_OK && mosaic_scope_open(m) == 0, "close outer");
    churn(m);
    CHECK(marked(h) == 0, "marked %llu after closing everything", (unsigned long long)marked(h));

    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
