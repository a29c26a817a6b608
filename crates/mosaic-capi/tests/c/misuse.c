/* Freed handles used again: a root freed twice, a mutator freed twice and
 * then used, a heap used after mosaic_heap_free. Each is reported as
 * MOSAIC_ERR_INVALID_ARGUMENT, the process goes on, and a rooted list built
 * before is intact afterwards, across collections.
 *
 *   misuse root|mutator|heap   (one scenario per run) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"


/* The last error is MOSAIC_ERR_INVALID_ARGUMENT with a message containing
 * each of the given strings. */
#define EXPECT_MISUSE(fn, what)                                                                         \
    do {                                                                                                \
        const char *msg_ = mosaic_last_error_message();                                                 \
        CHECK(mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT, "%s: error %d (%s)", fn,              \
              (int)mosaic_last_error(), msg_);                                                          \
        CHECK(strstr(msg_, fn) != NULL && strstr(msg_, what) != NULL, "%s: message \"%s\"", fn, msg_); \
    } while (0)

typedef struct Cell {
    struct Cell *next;
    uint64_t value;
} Cell;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Cell *)obj)->next);
}

static mosaic_embedder embedder = {.trace = trace};

/* A list of n cells holding n-1 .. 0, kept by a root. */
static mosaic_root *build(mosaic_mutator *m, uint64_t n) {
    mosaic_root *r = mosaic_root_new(m, NULL);
    for (uint64_t i = 0; i < n; i++) {
        Cell *c = mosaic_alloc(m, sizeof(Cell), 0);
        c->next = mosaic_root_get(r);
        c->value = i * 7919;
        mosaic_root_set(r, c);
    }
    return r;
}

static int intact(mosaic_root *r, uint64_t n) {
    uint64_t k = n;
    for (Cell *c = mosaic_root_get(r); c; c = c->next)
        if (k == 0 || c->value != --k * 7919) return 0;
    return k == 0;
}

/* Churns garbage and collects, so a damaged heap would show. */
static void churn(mosaic_mutator *m) {
    for (int i = 0; i < 100000; i++) mosaic_alloc(m, sizeof(Cell), 0);
    mosaic_collect(m);
}

static void root_twice(mosaic_mutator *m) {
    Cell *obj = mosaic_alloc(m, sizeof(Cell), 0);
    obj->value = 99;
    mosaic_root *r = mosaic_root_new(m, obj);
    mosaic_root_free(r);
    CHECK(mosaic_last_error() == MOSAIC_OK, "first free");
    mosaic_root_free(r);
    EXPECT_MISUSE("mosaic_root_free", "root was already freed (or is not a root)");
    CHECK(mosaic_root_get(r) == NULL, "root_get on a freed root");
    EXPECT_MISUSE("mosaic_root_get", "root was already freed");
    mosaic_root_set(r, obj);
    EXPECT_MISUSE("mosaic_root_set", "root was already freed");
    /* A root freed twice must not have freed its slot twice: two new roots
     * get two slots and hold two different objects. */
    Cell *a = mosaic_alloc(m, sizeof(Cell), 0), *b = mosaic_alloc(m, sizeof(Cell), 0);
    a->value = 1;
    b->value = 2;
    mosaic_root *ra = mosaic_root_new(m, a), *rb = mosaic_root_new(m, b);
    churn(m);
    CHECK(mosaic_root_get(ra) == a && mosaic_root_get(rb) == b && a->value == 1 && b->value == 2, "new roots");
    mosaic_root_free(ra);
    mosaic_root_free(rb);
}

/* The mutator of another thread, freed twice and then used. */
static void *mutator_thread(void *arg) {
    mosaic_heap *h = arg;
    mosaic_mutator *m = mosaic_mutator_new(h);
    mosaic_root *r = build(m, 1000);
    CHECK(intact(r, 1000), "the thread's list");
    mosaic_root_free(r);
    mosaic_mutator_free(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "first free");
    mosaic_mutator_free(m);
    EXPECT_MISUSE("mosaic_mutator_free", "mutator was already freed (or is not a mutator)");
    CHECK(mosaic_alloc(m, 16, 0) == NULL, "alloc through a freed mutator");
    EXPECT_MISUSE("mosaic_alloc", "mutator was already freed");
    mosaic_collect(m);
    EXPECT_MISUSE("mosaic_collect", "mutator was already freed");
    CHECK(mosaic_root_new(m, NULL) == NULL, "root_new through a freed mutator");
    EXPECT_MISUSE("mosaic_root_new", "mutator was already freed");
    return NULL;
}

static void mutator_twice(mosaic_heap *h) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, mutator_thread, h) == 0, "pthread_create");
    pthread_join(t, NULL);
}

static void heap_after_free(void) {
    mosaic_heap *h2 = mosaic_heap_new(NULL, &embedder);
    CHECK(h2 != NULL, "second heap: %s", mosaic_last_error_message());
    mosaic_heap_free(h2);
    CHECK(mosaic_last_error() == MOSAIC_OK, "first free");
    int local = 0;
    mosaic_stats st;
    mosaic_pool_stats ps;
    char line[256];
    CHECK(mosaic_mutator_new(h2) == NULL, "mutator of a freed heap");
    EXPECT_MISUSE("mosaic_mutator_new", "heap was already freed");
    CHECK(mosaic_heap_stats(h2, &st) == MOSAIC_ERR_INVALID_ARGUMENT, "stats of a freed heap");
    EXPECT_MISUSE("mosaic_heap_stats", "heap was already freed");
    CHECK(mosaic_heap_pool_stats(h2, 0, &ps) == MOSAIC_ERR_INVALID_ARGUMENT, "pool stats of a freed heap");
    EXPECT_MISUSE("mosaic_heap_pool_stats", "heap was already freed");
    CHECK(mosaic_stats_summary(h2, line, sizeof line) == 0, "summary of a freed heap");
    EXPECT_MISUSE("mosaic_stats_summary", "heap was already freed");
    CHECK(!mosaic_is_object(h2, &local), "is_object on a freed heap");
    EXPECT_MISUSE("mosaic_is_object", "heap was already freed");
    CHECK(mosaic_object_size(h2, &local) == 0, "object_size on a freed heap");
    EXPECT_MISUSE("mosaic_object_size", "heap was already freed");
    mosaic_heap_free(h2);
    EXPECT_MISUSE("mosaic_heap_free", "heap was already freed");
}

int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "";
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    mosaic_heap *h = mosaic_heap_new(&c, &embedder);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_mutator *m = mosaic_mutator_new(h);
    mosaic_root *list = build(m, 5000);

    if (strcmp(which, "root") == 0) {
        root_twice(m);
    } else if (strcmp(which, "mutator") == 0) {
        mutator_twice(h);
    } else if (strcmp(which, "heap") == 0) {
        heap_after_free();
    } else {
        CHECK(0, "unknown scenario \"%s\"", which);
    }

    /* The process went on and the heap is sound. */
    churn(m);
    CHECK(intact(list, 5000), "the list survived");
    mosaic_stats st;
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK && st.last_marked == 5000, "marked %llu",
          (unsigned long long)st.last_marked);
    mosaic_root_free(list);
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%s: %d failures\n", which, failures);
    return failures != 0;
}
