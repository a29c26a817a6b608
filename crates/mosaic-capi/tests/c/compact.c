/* Compaction through the C API. First scenario: a list of cons cells with
 * garbage in between, its head rooted by the roots callback; one cell
 * pinned with mosaic_pin keeps its address across mosaic_compact while the
 * others move (on_move counts them, resize moves a few into a bigger
 * pool), the list stays intact, objects held only by ambiguous words
 * (mosaic_visit_ambiguous(_range)) survive in place, the stats agree, and
 * the heap dump (argv[1]) has its HEAP line. Second scenario: with
 * mosaic_conservative_stack on, a list held only in a C local survives
 * collections that compact. Misuse and bad input are error codes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"

enum { CELL = 1, GARBAGE = 2 };

typedef struct Cons {
    struct Cons *cdr;
    uint64_t kind;
    uint64_t value;
    uint64_t check; /* value * 2654435761 */
} Cons;

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&((Cons *)obj)->cdr);
}

/* Precise root: the list head of the first scenario. */
static Cons *root_head;
/* Ambiguous roots: an interior pointer and a buffer of words. */
static uintptr_t hidden_word;
static uintptr_t hidden_words[4];
static mosaic_mutator *main_m;
static int misbehave;
static struct {
    mosaic_error compact, compact_toward, pin, dump, conservative;
} in_roots;

static void roots(void *ctx, mosaic_tracer *t) {
    (void)ctx;
    mosaic_visit(t, (void **)&root_head);
    mosaic_visit_ambiguous(t, hidden_word);
    /* Deliberately misaligned bounds: rounded inwards to whole words. */
    mosaic_visit_ambiguous_range(t, (const char *)hidden_words - 3, (const char *)(hidden_words + 4) + 5);
    mosaic_visit_ambiguous_range(t, NULL, hidden_words);          /* ignored */
    mosaic_visit_ambiguous_range(t, hidden_words + 4, hidden_words); /* reversed: ignored */
    mosaic_visit_ambiguous(NULL, hidden_word);                     /* ignored */
    if (!misbehave) return;
    misbehave = 0;
    in_roots.compact = mosaic_compact(main_m);
    in_roots.compact_toward = mosaic_compact_toward(main_m, MOSAIC_COMPACT_ADDRESS);
    in_roots.pin = mosaic_pin(main_m, root_head);
    in_roots.dump = mosaic_dump_heap(main_m, "/dev/null");
    in_roots.conservative = mosaic_conservative_stack(main_m, true);
}

/* What on_move saw. It runs on GC workers, several at once. */
static uint64_t moves, resized_moves, bad_moves;
static uintptr_t pinned_addr, hidden_addr, hidden_addr2;

static void on_move(void *ctx, void *from, void *to, size_t old_size, size_t new_size) {
    (void)ctx;
    uintptr_t f = (uintptr_t)from;
    __atomic_fetch_add(&moves, 1, __ATOMIC_RELAXED);
    if (old_size != new_size) __atomic_fetch_add(&resized_moves, 1, __ATOMIC_RELAXED);
    Cons *c = to;
    if (f == pinned_addr || f == hidden_addr || f == hidden_addr2 || from == to ||
        (c->kind == CELL && c->check != c->value * 2654435761u))
        __atomic_fetch_add(&bad_moves, 1, __ATOMIC_RELAXED);
}

/* Every 100th list cell would rather be 64 bytes. */
static size_t resize(void *ctx, void *obj, size_t size) {
    (void)ctx;
    Cons *c = obj;
    return c->kind == CELL && c->value % 100 == 7 && size < 64 ? 64 : 0;
}

static const char *type_name(void *ctx, void *obj) {
    (void)ctx;
    switch (((Cons *)obj)->kind) {
    case CELL: return "cons";
    case GARBAGE: return "garbage";
    default: return NULL;
    }
}

static Cons *new_cons(mosaic_mutator *m, uint64_t kind, uint64_t value, Cons *cdr) {
    Cons *c = mosaic_alloc(m, sizeof(Cons), 0);
    CHECK(c != NULL, "alloc: %s", mosaic_last_error_message());
    if (!c) exit(1);
    c->cdr = cdr;
    c->kind = kind;
    c->value = value;
    c->check = value * 2654435761u;
    return c;
}

/* The list from `head` holds n-1 .. 0, intact. */
static void check_list(const Cons *head, uint64_t n, const char *when) {
    uint64_t want = n;
    for (const Cons *c = head; c; c = c->cdr) {
        want--;
        if (c->kind != CELL || c->value != want || c->check != want * 2654435761u) {
            CHECK(0, "%s: cell %llu corrupt: kind %llu value %llu", when, (unsigned long long)want,
                  (unsigned long long)c->kind, (unsigned long long)c->value);
            return;
        }
    }
    CHECK(want == 0, "%s: list short by %llu cells", when, (unsigned long long)want);
}

enum { N = 4000 };

static void pinned_list(const mosaic_embedder *e, const char *dump_path) {
    mosaic_config cfg;
    mosaic_config_default(&cfg);
    CHECK(cfg.compact == MOSAIC_COMPACT_NEVER && cfg.compact_toward == MOSAIC_COMPACT_PINNED_FIRST &&
              !cfg.verify_compaction,
          "compaction defaults: %u %u %d", cfg.compact, cfg.compact_toward, cfg.verify_compaction);
    cfg.max_heap = 64u << 20;
    cfg.verify = true;
    mosaic_heap *h = mosaic_heap_new(&cfg, e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    if (!h) return;
    mosaic_mutator *m = mosaic_mutator_new(h);
    main_m = m;

    /* A list with three garbage cells before each list cell. */
    for (uint64_t i = 0; i < N; i++) {
        for (int g = 0; g < 3; g++) new_cons(m, GARBAGE, i, NULL);
        root_head = new_cons(m, CELL, i, root_head);
    }
    /* Two objects held only by ambiguous words. */
    Cons *hidden = new_cons(m, CELL, 77, NULL);
    hidden_addr = (uintptr_t)hidden;
    hidden_word = hidden_addr + 8; /* an interior pointer */
    Cons *hidden2 = new_cons(m, CELL, 78, NULL);
    hidden_addr2 = (uintptr_t)hidden2;
    hidden_words[2] = hidden_addr2;

    Cons *pinned = root_head;
    while (pinned && pinned->value != N / 2) pinned = pinned->cdr;
    CHECK(pinned != NULL, "no middle cell");
    if (!pinned) return;
    pinned_addr = (uintptr_t)pinned;
    CHECK(!mosaic_is_pinned(h, pinned), "pinned before mosaic_pin");
    CHECK(mosaic_pin(m, pinned) == MOSAIC_OK, "pin: %s", mosaic_last_error_message());
    CHECK(mosaic_pin(m, pinned) == MOSAIC_OK, "second pin: %s", mosaic_last_error_message());
    CHECK(mosaic_is_pinned(h, pinned) && mosaic_last_error() == MOSAIC_OK, "not pinned");
    CHECK(!mosaic_is_pinned(h, root_head), "the head is pinned");
    CHECK(!mosaic_is_pinned(h, &cfg) && mosaic_last_error() == MOSAIC_OK, "a foreign pointer is pinned");

    /* Where every list cell is now (as integers: nothing the GC reads). */
    uintptr_t *before = malloc(N * sizeof *before);
    for (Cons *c = root_head; c; c = c->cdr) before[c->value] = (uintptr_t)c;

    CHECK(mosaic_compact(m) == MOSAIC_OK, "compact: %s", mosaic_last_error_message());
    CHECK(moves > 0, "nothing moved");
    CHECK(resized_moves > 0, "no cell moved to a bigger pool");
    CHECK(bad_moves == 0, "%llu bad moves (pinned or ambiguous objects moved, or corrupt)",
          (unsigned long long)bad_moves);
    check_list(root_head, N, "after compaction");
    uint64_t moved_cells = 0;
    int pinned_seen = 0;
    for (Cons *c = root_head; c; c = c->cdr) {
        if (c->value >= N) break;
        moved_cells += (uintptr_t)c != before[c->value];
        if (c->value == N / 2) {
            pinned_seen = 1;
            CHECK((uintptr_t)c == pinned_addr, "the pinned cell moved");
        }
        if (c->value % 100 == 7)
            CHECK(mosaic_object_size(h, c) >= 64, "cell %llu was not resized (%zu bytes)",
                  (unsigned long long)c->value, mosaic_object_size(h, c));
    }
    CHECK(pinned_seen, "the pinned cell is gone");
    CHECK(moved_cells > 0, "no list cell moved");
    free(before);
    /* The ambiguous objects were kept where they are. */
    CHECK(mosaic_is_object(h, hidden) && hidden->value == 77 && hidden->check == 77 * (uint64_t)2654435761u,
          "interior-pointer object lost");
    CHECK(mosaic_is_object(h, hidden2) && hidden2->value == 78 && hidden2->check == 78 * (uint64_t)2654435761u,
          "range-held object lost");

    mosaic_stats st;
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK, "stats");
    CHECK(st.compactions == 1, "%llu compactions", (unsigned long long)st.compactions);
    CHECK(st.last_compaction_objects_moved == moves, "stats say %llu moved, on_move saw %llu",
          (unsigned long long)st.last_compaction_objects_moved, (unsigned long long)moves);
    CHECK(st.total_objects_moved == moves, "total moved %llu", (unsigned long long)st.total_objects_moved);
    CHECK(st.last_compaction_bytes_moved >= 32 * moves, "bytes moved %llu",
          (unsigned long long)st.last_compaction_bytes_moved);
    CHECK(st.last_compaction_pages_emptied > 0, "no page emptied");
    CHECK(st.pinned_objects == 1, "%zu pinned objects", st.pinned_objects);

    /* The dump: a HEAP line first, type names, the pinned cell. */
    CHECK(mosaic_dump_heap(m, dump_path) == MOSAIC_OK, "dump: %s", mosaic_last_error_message());
    FILE *f = fopen(dump_path, "r");
    CHECK(f != NULL, "cannot read the dump %s", dump_path);
    if (f) {
        char line[512];
        int heap_line = 0, cons = 0, pinned_line = 0;
        char want[64];
        snprintf(want, sizeof want, "\"address\":\"%#llx\"", (unsigned long long)pinned_addr);
        for (int i = 0; fgets(line, sizeof line, f); i++) {
            if (i == 0) heap_line = strncmp(line, "{\"type\":\"HEAP\"", 14) == 0;
            cons += strstr(line, "\"type_name\":\"cons\"") != NULL;
            if (strstr(line, want)) pinned_line = strstr(line, "\"pinned\":true") != NULL;
        }
        fclose(f);
        CHECK(heap_line, "the dump does not start with a HEAP line");
        CHECK(cons >= N, "%d cons objects in the dump", cons);
        CHECK(pinned_line, "the pinned cell is not a pinned OBJECT in the dump");
    }

    /* Bad input. */
    CHECK(mosaic_dump_heap(m, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "dump(NULL path)");
    EXPECT_INVALID("mosaic_dump_heap");
    CHECK(mosaic_dump_heap(m, "/nonexistent-mosaic-dir/dump.json") == MOSAIC_ERR_INVALID_ARGUMENT, "dump to a bad path");
    EXPECT_INVALID("mosaic_dump_heap");
    CHECK(strstr(mosaic_last_error_message(), "/nonexistent-mosaic-dir/dump.json") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(mosaic_dump_heap(NULL, dump_path) == MOSAIC_ERR_INVALID_ARGUMENT, "dump(NULL)");
    EXPECT_INVALID("mosaic_dump_heap");
    CHECK(mosaic_compact(NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "compact(NULL)");
    EXPECT_INVALID("mosaic_compact");
    CHECK(mosaic_compact_toward(m, 2) == MOSAIC_ERR_INVALID_ARGUMENT, "compact_toward(2)");
    EXPECT_INVALID("mosaic_compact_toward");
    CHECK(mosaic_pin(m, NULL) == MOSAIC_ERR_INVALID_ARGUMENT, "pin(NULL)");
    EXPECT_INVALID("mosaic_pin");
    CHECK(mosaic_pin(m, &cfg) == MOSAIC_ERR_FOREIGN_POINTER, "pin(foreign)");
    EXPECT_ERROR(MOSAIC_ERR_FOREIGN_POINTER, "mosaic_pin");
    CHECK(mosaic_pin(NULL, pinned) == MOSAIC_ERR_INVALID_ARGUMENT, "pin(NULL mutator)");
    EXPECT_INVALID("mosaic_pin");
    CHECK(!mosaic_is_pinned(NULL, pinned), "is_pinned(NULL)");
    EXPECT_INVALID("mosaic_is_pinned");
    CHECK(mosaic_conservative_stack(NULL, true) == MOSAIC_ERR_INVALID_ARGUMENT, "conservative_stack(NULL)");
    EXPECT_INVALID("mosaic_conservative_stack");

    /* Inside a collector callback and a blocking region: refused. */
    misbehave = 1;
    mosaic_collect(m);
    CHECK(mosaic_last_error() == MOSAIC_OK, "collect: %s", mosaic_last_error_message());
    CHECK(in_roots.compact == MOSAIC_ERR_MISUSE, "compact in roots: %d", (int)in_roots.compact);
    CHECK(in_roots.compact_toward == MOSAIC_ERR_MISUSE, "compact_toward in roots: %d", (int)in_roots.compact_toward);
    CHECK(in_roots.pin == MOSAIC_ERR_MISUSE, "pin in roots: %d", (int)in_roots.pin);
    CHECK(in_roots.dump == MOSAIC_ERR_MISUSE, "dump in roots: %d", (int)in_roots.dump);
    CHECK(in_roots.conservative == MOSAIC_ERR_MISUSE, "conservative_stack in roots: %d", (int)in_roots.conservative);
    CHECK(mosaic_blocking_enter(m) == MOSAIC_OK, "enter");
    CHECK(mosaic_compact(m) == MOSAIC_ERR_MISUSE, "compact while blocking");
    EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_compact");
    CHECK(mosaic_conservative_stack(m, true) == MOSAIC_ERR_MISUSE, "conservative_stack while blocking");
    EXPECT_ERROR(MOSAIC_ERR_MISUSE, "mosaic_conservative_stack");
    CHECK(mosaic_blocking_leave(m) == MOSAIC_OK, "leave");

    /* Unpinned (twice, as pinned), the cell may move: toward low addresses. */
    CHECK(mosaic_unpin(m, pinned) == MOSAIC_OK, "unpin: %s", mosaic_last_error_message());
    CHECK(mosaic_is_pinned(h, pinned), "one pin left");
    CHECK(mosaic_unpin(m, pinned) == MOSAIC_OK, "second unpin: %s", mosaic_last_error_message());
    CHECK(!mosaic_is_pinned(h, pinned), "still pinned");
    CHECK(mosaic_unpin(m, pinned) == MOSAIC_ERR_INVALID_ARGUMENT, "a third unpin");
    EXPECT_INVALID("mosaic_unpin");
    pinned_addr = hidden_addr = hidden_addr2 = 0;
    hidden_word = 0;
    hidden_words[2] = 0;
    CHECK(mosaic_compact_toward(m, MOSAIC_COMPACT_ADDRESS) == MOSAIC_OK, "compact_toward: %s",
          mosaic_last_error_message());
    check_list(root_head, N, "after compacting toward low addresses");
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK && st.compactions == 2 && st.pinned_objects == 0,
          "%llu compactions, %zu pinned", (unsigned long long)st.compactions, st.pinned_objects);

    root_head = NULL;
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    main_m = NULL;
}

/* The list lives only in `head`, a local of this frame: no root, no
 * scope slot. Every collection compacts; the conservative scan of this
 * thread's stack keeps the head alive and in place, and the cells behind
 * it are updated precisely. */
static __attribute__((noinline)) void build_on_the_stack(mosaic_mutator *m, uint64_t n) {
    Cons *volatile head = NULL;
    for (uint64_t i = 0; i < n; i++) {
        for (int g = 0; g < 3; g++) new_cons(m, GARBAGE, i, NULL);
        head = new_cons(m, CELL, i, head);
        if (i % 500 == 499) {
            mosaic_collect(m);
            CHECK(mosaic_last_error() == MOSAIC_OK, "collect: %s", mosaic_last_error_message());
        }
    }
    Cons *first = head;
    for (int k = 0; k < 3; k++) {
        mosaic_collect(m);
        for (int g = 0; g < 1000; g++) new_cons(m, GARBAGE, g, NULL);
    }
    CHECK(mosaic_compact(m) == MOSAIC_OK, "compact: %s", mosaic_last_error_message());
    CHECK(head == first, "the head changed");
    check_list(head, n, "conservative stack");
}

static void conservative_list(const mosaic_embedder *e) {
    mosaic_config cfg;
    mosaic_config_default(&cfg);
    cfg.max_heap = 64u << 20;
    cfg.verify = true;
    cfg.compact = MOSAIC_COMPACT_ALWAYS;
    cfg.stress = 997;
    mosaic_heap *h = mosaic_heap_new(&cfg, e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    if (!h) return;
    mosaic_mutator *m = mosaic_mutator_new(h);
    CHECK(mosaic_conservative_stack(m, true) == MOSAIC_OK, "conservative_stack: %s", mosaic_last_error_message());
    moves = bad_moves = 0;
    build_on_the_stack(m, N);
    mosaic_stats st;
    CHECK(mosaic_heap_stats(h, &st) == MOSAIC_OK, "stats");
    CHECK(st.compactions > 5, "%llu compactions", (unsigned long long)st.compactions);
    CHECK(moves > 0 && st.total_objects_moved == moves, "%llu moves, stats say %llu", (unsigned long long)moves,
          (unsigned long long)st.total_objects_moved);
    CHECK(bad_moves == 0, "%llu corrupt moves", (unsigned long long)bad_moves);
    CHECK(mosaic_conservative_stack(m, false) == MOSAIC_OK, "conservative_stack off: %s", mosaic_last_error_message());
    mosaic_mutator_free(m);
    mosaic_heap_free(h);
}

int main(int argc, char **argv) {
    CHECK(argc == 2, "usage: compact DUMP_PATH");
    if (argc != 2) return 1;
    mosaic_embedder e = {
        .trace = trace, .roots = roots, .on_move = on_move, .resize = resize, .type_name = type_name};
    pinned_list(&e, argv[1]);
    conservative_list(&e);

    /* A bad compaction value in the config is a configuration error. */
    mosaic_config cfg;
    mosaic_config_default(&cfg);
    cfg.compact = 3;
    CHECK(mosaic_heap_new(&cfg, &e) == NULL, "compact = 3 accepted");
    EXPECT_ERROR(MOSAIC_ERR_CONFIG, "mosaic_heap_new");
    mosaic_config_default(&cfg);
    cfg.compact_toward = 9;
    CHECK(mosaic_heap_new(&cfg, &e) == NULL, "compact_toward = 9 accepted");
    EXPECT_ERROR(MOSAIC_ERR_CONFIG, "mosaic_heap_new");

    printf("%d failures\n", failures);
    return failures != 0;
}
