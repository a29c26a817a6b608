/* Builds a binary tree across many collections through the C API, checks
 * every node, and checks that bad input gets error codes, not crashes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"

typedef struct Node {
    struct Node *left, *right;
    uint64_t id;
    uint64_t check; /* id * 2654435761 */
} Node;


static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    Node *n = obj;
    mosaic_visit(t, (void **)&n->left);
    mosaic_visit(t, (void **)&n->right);
}

static uint64_t next_id;

/* Children are kept in roots while the parent is allocated. */
static Node *build(mosaic_mutator *m, int depth) {
    Node *l = NULL, *r = NULL;
    mosaic_root *rl = NULL, *rr = NULL;
    if (depth > 0) {
        rl = mosaic_root_new(m, build(m, depth - 1));
        rr = mosaic_root_new(m, build(m, depth - 1));
    }
    Node *n = mosaic_alloc(m, sizeof(Node), 0);
    if (!n) return NULL;
    if (depth > 0) {
        l = mosaic_root_get(rl);
        r = mosaic_root_get(rr);
        mosaic_root_free(rl);
        mosaic_root_free(rr);
    }
    CHECK(n->left == NULL && n->right == NULL && n->id == 0, "allocation not zeroed");
    n->left = l;
    n->right = r;
    n->id = ++next_id;
    n->check = n->id * 2654435761u;
    return n;
}

static long count(Node *n, int depth) {
    if (!n) return 0;
    CHECK(n->check == n->id * 2654435761u, "node %llu corrupted", (unsigned long long)n->id);
    if (depth == 0) CHECK(!n->left && !n->right, "leaf has children");
    return 1 + count(n->left, depth - 1) + count(n->right, depth - 1);
}

int main(void) {
    mosaic_embedder e = {.trace = trace};
    mosaic_config c;
    CHECK(mosaic_config_default(&c) == MOSAIC_OK, "config");
    c.max_heap = 32u << 20;
    c.initial_slots = 256;
    c.verify = true;
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(h);

    mosaic_root *keep = mosaic_root_new(m, build(m, 14));
    for (int round = 0; round < 20; round++) {
        build(m, 10); /* garbage */
        if (round % 5 == 0) mosaic_collect(m);
        CHECK(count(mosaic_root_get(keep), 14) == 32767, "tree size in round %d", round);
    }
    mosaic_collect(m);
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 32767, "marked %llu", (unsigned long long)st.last_marked);
    CHECK(st.collections >= 5, "collections %llu", (unsigned long long)st.collections);
    /* The policy counts whole running mutators, at least one. */
    CHECK(st.running_mutators >= 1.0 && st.running_mutators == (double)(long)st.running_mutators,
          "running mutators %g", st.running_mutators);
    /* Verify mode keeps the sweep's poison: background sweeping clears nothing. */
    CHECK(st.background_cleared_bytes == 0, "cleared %llu in verify mode",
          (unsigned long long)st.background_cleared_bytes);
    mosaic_pool_stats ps;
    CHECK(mosaic_heap_pool_stats(h, 1, &ps) == MOSAIC_OK && ps.slot_size == 32, "pool 1 is 32 bytes");
    CHECK(mosaic_heap_pool_stats(h, 999, &ps) == MOSAIC_ERR_INVALID_ARGUMENT, "pool 999");

    /* Bad input: errors, not crashes, and nothing lost. */
    CHECK(mosaic_alloc(NULL, 16, 0) == NULL && mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT, "NULL mutator");
    CHECK(mosaic_alloc(m, 16, 0x80) == NULL && mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT, "bad flags");
    CHECK(mosaic_alloc(m, SIZE_MAX, 0) == NULL && mosaic_last_error() == MOSAIC_ERR_TOO_LARGE, "SIZE_MAX");
    CHECK(strstr(mosaic_last_error_message(), "too large") != NULL, "message: %s", mosaic_last_error_message());
    int on_stack = 0;
    CHECK(mosaic_root_new(m, &on_stack) == NULL && mosaic_last_error() == MOSAIC_ERR_FOREIGN_POINTER, "foreign");
    CHECK(mosaic_object_size(h, &on_stack) == 0 && mosaic_last_error() == MOSAIC_ERR_FOREIGN_POINTER, "size");
    CHECK(!mosaic_is_object(h, &on_stack) && !mosaic_is_object(NULL, &on_stack), "is_object");
    CHECK(mosaic_is_object(h, mosaic_root_get(keep)), "the tree's root is an object");
    CHECK(mosaic_object_size(h, mosaic_root_get(keep)) == 32, "node slot size");
    c.free_min_ratio = 0.9;
    CHECK(mosaic_heap_new(&c, &e) == NULL && mosaic_last_error() == MOSAIC_ERR_CONFIG, "bad config");
    mosaic_embedder none = {0};
    CHECK(mosaic_heap_new(NULL, &none) == NULL && mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT, "no trace");
    mosaic_collect(NULL);
    mosaic_root_free(NULL);
    mosaic_mutator_free(NULL);
    mosaic_heap_free(NULL);

    /* Exhaust the 32 MiB heap with live large objects, then recover. */
    mosaic_root *big[64];
    int nbig = 0;
    void *p;
    while (nbig < 64 && (p = mosaic_alloc(m, 1u << 20, MOSAIC_NO_POINTERS)) != NULL) big[nbig++] = mosaic_root_new(m, p);
    CHECK(nbig < 64 && mosaic_last_error() == MOSAIC_ERR_OUT_OF_MEMORY, "OOM after %d MiB", nbig);
    CHECK(count(mosaic_root_get(keep), 14) == 32767, "tree intact after OOM");
    for (int i = 0; i < nbig; i++) mosaic_root_free(big[i]);
    CHECK(mosaic_alloc(m, 1u << 20, 0) != NULL, "allocation works again: %s", mosaic_last_error_message());

    char line[512];
    size_t n = mosaic_stats_summary(h, line, sizeof line);
    CHECK(n > 20 && strncmp(line, "mosaic: ", 8) == 0, "summary: %s", line);
    mosaic_root_free(keep);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
