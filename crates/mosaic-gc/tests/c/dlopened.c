/* The library loaded with dlopen by a program not linked with it (a plugin,
 * an interpreter's extension module): it must load (its thread-local block
 * is in the initial-exec TLS model, placed in glibc's static TLS surplus),
 * and GC_malloc's inline path must hand out objects that survive
 * collections with their contents, on the main thread, in a finalizer that
 * allocates (it runs inside an allocation call, with the thread's mutator
 * lent to it), and on threads that register themselves. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; long id; };
struct GC_stack_base { void *mem_base; };
typedef void (*finalizer_fn)(void *obj, void *data);

static void *(*gc_malloc)(size_t);
static void *(*gc_malloc_atomic)(size_t);
static void *(*gc_malloc_uncollectable)(size_t);
static void (*gc_gcollect)(void);
static int (*gc_invoke_finalizers)(void);
static void (*gc_register_finalizer)(void *, finalizer_fn, void *, finalizer_fn *, void **);
static int (*gc_get_stack_base)(struct GC_stack_base *);
static int (*gc_register_my_thread)(const struct GC_stack_base *);
static int (*gc_unregister_my_thread)(void);

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        printf("dlsym %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

static struct node *make_list(long base, long len) {
    struct node *head = NULL;
    for (long i = 0; i < len; i++) {
        struct node *n = gc_malloc(sizeof *n);
        if (!n)
            return NULL;
        n->id = base + i;
        n->next = head;
        head = n;
    }
    return head;
}

/* The list holds base + len - 1 down to base, each node once. */
static int list_ok(struct node *n, long base, long len) {
    for (long i = len - 1; i >= 0; i--, n = n->next)
        if (!n || n->id != base + i)
            return 0;
    return n == NULL;
}

/* Garbage: enough allocation, of both kinds, for a few collections. */
static void churn(long bytes) {
    for (long done = 0; done < bytes; done += 96) {
        volatile char *g = gc_malloc(48);
        char *a = gc_malloc_atomic(48);
        g[0] = 1;
        memset(a, 0x5a, 48);
    }
}

#define FINALIZERS 10
static struct node **kept; /* uncollectable: a root the collector sees */
static int finalized;

static void finalize(void *obj, void *data) {
    (void)obj;
    (void)data;
    /* Allocates inside the allocation call that runs it (which may run
     * another finalizer meanwhile). */
    int me = finalized++;
    if (me < FINALIZERS)
        kept[1 + me] = make_list(5000000 + me * 1000, 1000);
}

#define THREADS 2
#define LEN 20000

static void *thread_main(void *arg) {
    long t = (long)arg;
    struct GC_stack_base sb;
    if (gc_get_stack_base(&sb) != 0 || gc_register_my_thread(&sb) != 0)
        return (void *)0;
    struct node *l = make_list(t * 1000000, LEN);
    churn(8L << 20);
    gc_gcollect();
    churn(8L << 20);
    long ok = list_ok(l, t * 1000000, LEN);
    gc_unregister_my_thread();
    return (void *)ok;
}

int main(void) {
    void *lib = dlopen("libgc.so.1", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen: %s\n", lib ? "ok" : dlerror());
    if (!lib)
        return 1;
    void (*gc_init)(void) = sym(lib, "GC_init");
    void (*gc_allow_register_threads)(void) = sym(lib, "GC_allow_register_threads");
    gc_malloc = sym(lib, "GC_malloc");
    gc_malloc_atomic = sym(lib, "GC_malloc_atomic");
    gc_malloc_uncollectable = sym(lib, "GC_malloc_uncollectable");
    gc_gcollect = sym(lib, "GC_gcollect");
    gc_invoke_finalizers = sym(lib, "GC_invoke_finalizers");
    gc_register_finalizer = sym(lib, "GC_register_finalizer");
    gc_get_stack_base = sym(lib, "GC_get_stack_base");
    gc_register_my_thread = sym(lib, "GC_register_my_thread");
    gc_unregister_my_thread = sym(lib, "GC_unregister_my_thread");
    gc_init();
    gc_allow_register_threads();

    /* The main thread: a list and pointer-free blocks kept across
     * collections, checked by content. */
    kept = gc_malloc_uncollectable((1 + FINALIZERS) * sizeof *kept);
    kept[0] = make_list(0, LEN);
    unsigned char *blocks[64];
    for (int i = 0; i < 64; i++) {
        blocks[i] = gc_malloc_atomic(200);
        memset(blocks[i], i, 200);
    }
    struct node **holder = gc_malloc(64 * sizeof *holder);
    for (int i = 0; i < 64; i++)
        holder[i] = (struct node *)blocks[i];
    churn(16L << 20);
    gc_gcollect();
    churn(16L << 20);
    int blocks_ok = 1;
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 200; j++)
            if (((unsigned char *)holder[i])[j] != i)
                blocks_ok = 0;
    printf("main thread: %s\n", list_ok(kept[0], 0, LEN) && blocks_ok ? "ok" : "FAILED");

    /* Finalizers that allocate, run inside allocation calls. */
    for (int i = 0; i < FINALIZERS; i++) {
        void *o = gc_malloc(32);
        gc_register_finalizer(o, finalize, NULL, NULL, NULL);
    }
    for (int round = 0; round < 20 && finalized < FINALIZERS; round++) {
        gc_gcollect();
        churn(1L << 20);
        gc_invoke_finalizers();
    }
    churn(16L << 20);
    gc_gcollect();
    int lists_ok = 1;
    for (int i = 0; i < FINALIZERS; i++)
        lists_ok &= list_ok(kept[1 + i], 5000000 + i * 1000, 1000);
    if (finalized == FINALIZERS && lists_ok)
        printf("finalizers that allocate: ok\n");
    else
        printf("finalizers that allocate: FAILED (%d ran)\n", finalized);

    /* Threads that register themselves. */
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(t + 1));
    int threads_ok = 1;
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        threads_ok &= r == (void *)1;
    }
    printf("registered threads: %s\n", threads_ok ? "ok" : "FAILED");
    printf("main list after the threads: %s\n", list_ok(kept[0], 0, LEN) ? "ok" : "FAILED");
    return 0;
}
