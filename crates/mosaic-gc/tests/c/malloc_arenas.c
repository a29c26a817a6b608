/* Collections while other threads are inside malloc: a stop signal can
 * interrupt a thread that holds one of glibc's arena locks, so nothing the
 * collector does until the world resumes may wait for that lock. With one
 * arena for the whole process (mallopt(M_ARENA_MAX, 1)) every thread shares
 * it, the collecting thread and the threads just registering included.
 *
 * 1. malloc/free loops in 8 registered threads while 2 threads allocate
 *    from the collector and collect; every kept object checked by content.
 * 2. The same while a spawner creates and joins 1000 short-lived threads
 *    (each registers through GC_pthread_create, mallocs and allocates):
 *    a thread joining the world must not call malloc before its first
 *    safepoint.
 * Each GC thread also keeps a chain of cells of a kind with a mark
 * procedure (procedures run on the GC workers; the Rust runner sets
 * MOSAIC_PARALLEL_MIN_LIVE=0 so that every collection marks in parallel,
 * and turns glibc's per-thread cache off, so every malloc takes the lock).
 * A hang is the failure: alarm() ends the process after 60 s.
 * Prints one "<case>: ok" line per case. */
#define GC_THREADS
#include <gc.h>
#include <gc_mark.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEEP 1000
#define ROUNDS 60000

static volatile int stop;
static int cell_kind;

/* A cell: word 0 the next cell, word 1 a check value. */
static struct GC_ms_entry *mark_cell(GC_word *addr, struct GC_ms_entry *top,
                                     struct GC_ms_entry *limit, GC_word env) {
    (void)env;
    return GC_MARK_AND_PUSH((void *)addr[0], top, limit, (void **)addr);
}

static GC_word *new_cell(GC_word *next, GC_word check) {
    GC_word *c = GC_generic_malloc(2 * sizeof(GC_word), cell_kind);
    c[0] = (GC_word)next;
    c[1] = check;
    return c;
}

static void *mallocer(void *arg) {
    (void)arg;
    while (!stop) {
        void *p[16];
        for (int i = 0; i < 16; i++) {
            p[i] = malloc(32 + (i * 97) % 4000);
            memset(p[i], 1, 8);
        }
        for (int i = 0; i < 16; i++)
            free(p[i]);
    }
    return NULL;
}

/* Keeps KEEP objects, each filled with its slot's pattern; returns the
 * number of kept objects whose contents are wrong. */
static void *gcer(void *arg) {
    long id = (long)arg;
    unsigned char **keep = GC_MALLOC(KEEP * sizeof(void *));
    GC_word *chain = NULL;
    GC_word cells = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 100 == 0)
            chain = new_cell(chain, cells++ * 3 + (GC_word)id);
        size_t n = 64 + (size_t)(r % 7) * 16;
        unsigned char *o = GC_MALLOC(n);
        memset(o, (int)((r % KEEP + id) & 0xff), n);
        keep[r % KEEP] = o;
        if (r % 5000 == 0)
            GC_gcollect();
    }
    long bad = 0;
    for (int i = 0; i < KEEP; i++) {
        unsigned char want = (unsigned char)((i + id) & 0xff);
        if (keep[i] == NULL || keep[i][0] != want || keep[i][63] != want)
            bad++;
    }
    for (GC_word k = cells; k-- > 0; chain = (GC_word *)chain[0])
        if (chain == NULL || chain[1] != k * 3 + (GC_word)id)
            return (void *)(bad + 1);
    return (void *)bad;
}

static void *short_lived(void *arg) {
    (void)arg;
    for (int i = 0; i < 20; i++) {
        free(malloc(100 + i));
        void *o = GC_MALLOC(48);
        memset(o, 7, 48);
    }
    return NULL;
}

static void *spawner(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_lived, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

static int run(const char *name, int with_spawner) {
    pthread_t m[8], g[2], s;
    stop = 0;
    for (int i = 0; i < 8; i++)
        pthread_create(&m[i], NULL, mallocer, NULL);
    if (with_spawner)
        pthread_create(&s, NULL, spawner, NULL);
    for (long i = 0; i < 2; i++)
        pthread_create(&g[i], NULL, gcer, (void *)i);
    long bad = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(g[i], &r);
        bad += (long)r;
    }
    if (with_spawner)
        pthread_join(s, NULL);
    stop = 1;
    for (int i = 0; i < 8; i++)
        pthread_join(m[i], NULL);
    if (bad != 0) {
        printf("%s: %ld kept objects lost or overwritten\n", name, bad);
        return 1;
    }
    printf("%s: ok\n", name);
    fflush(stdout);
    return 0;
}

int main(void) {
    mallopt(M_ARENA_MAX, 1);
    alarm(60);
    GC_INIT();
    GC_allow_register_threads();
    cell_kind = (int)GC_new_kind(GC_new_free_list(), GC_MAKE_PROC(GC_new_proc(mark_cell), 0), 0, 1);
    int failed = run("collections while threads hold the malloc arena", 0);
    failed |= run("threads registering while threads hold the malloc arena", 1);
    return failed;
}
