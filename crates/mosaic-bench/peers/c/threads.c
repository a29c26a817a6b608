/* Mutator scaling, the same algorithm as
 * crates/mosaic-bench/src/workloads/threads.rs: THREADS threads each make
 * ALLOCS allocations of 16, 32, 48, 64 bytes in turn (allocation i is
 * 16 * (1 + i % 4) bytes, holding i and the thread's number), keeping the
 * last RING in a ring: allocation i goes to slot i % RING, replacing
 * allocation i - RING. Each thread then checks its ring and returns the sum
 * of the words it finds; the check value is the sum over threads.
 *
 * Built four ways:
 * - Boehm (-DUSE_BOEHM): objects from GC_MALLOC_ATOMIC (they hold no
 *   pointers; Mosaic allocates them UNINIT, the same contract), the ring
 *   array from GC_MALLOC (scanned); gc.h (GC_THREADS, in boehm.h) redirects
 *   pthread_create to GC_pthread_create, which registers each thread, and
 *   Debian's libgc allocates from thread-local free lists. Heap limit:
 *   GC_MAXIMUM_HEAP_SIZE.
 * - glibc, jemalloc (-DUSE_JEMALLOC: mallocx/dallocx), mimalloc
 *   (-DUSE_MIMALLOC): the ring is a plain array and the replaced object is
 *   freed, as in alloc.c. Nobody clears the objects.
 * Nobody frees the rings or their last objects at the end.
 *
 * usage: threads THREADS ALLOCS RING
 * Prints TIME: from starting the first thread to joining the last (heap set
 * up before), and ns_per_alloc: that time over THREADS * ALLOCS. */
#include <pthread.h>
#if defined(USE_BOEHM)
#include "boehm.h"
#define ALLOC(n) GC_MALLOC_ATOMIC(n)
#define FREE(p) ((void)(p))
#define RING_ALLOC(n) GC_MALLOC(n)
#else
#include "malloc_peer.h"
#define RING_ALLOC(n) ALLOC(n)
#endif

#define MAX_THREADS 256

static long allocs, ring_size;

typedef struct {
    uint64_t tag;
    unsigned long long sum;
    char pad[48]; /* one cache line per thread */
} Thread;

static void *run(void *arg) {
    Thread *me = arg;
    uint64_t tag = me->tag;
    uint64_t **ring = RING_ALLOC((size_t)ring_size * sizeof *ring);
    if (!ring) {
        fprintf(stderr, "out of memory (ring)\n");
        exit(1);
    }
    long slot = 0;
    for (long i = 0; i < allocs; i++) {
        uint64_t *o = ALLOC((size_t)16 * (1 + (i & 3)));
        if (!o) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        o[0] = (uint64_t)i;
        o[1] = tag;
        if (i >= ring_size) FREE(ring[slot]);
        ring[slot] = o;
        if (++slot == ring_size) slot = 0;
    }
    long kept = allocs < ring_size ? allocs : ring_size;
    unsigned long long sum = 0;
    for (long j = 0; j < kept; j++) {
        /* The last allocation index below ALLOCS that went to slot j. */
        uint64_t want = (uint64_t)(j + (allocs - 1 - j) / ring_size * ring_size);
        if (ring[j][0] != want || ring[j][1] != tag) {
            fprintf(stderr, "slot %ld of thread %llu holds the wrong object\n", j, (unsigned long long)tag);
            exit(1);
        }
        sum += ring[j][0] + ring[j][1];
    }
    me->sum = sum;
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    allocs = argc > 2 ? atol(argv[2]) : 1000000;
    ring_size = argc > 3 ? atol(argv[3]) : 65536;
    if (threads < 1 || threads > MAX_THREADS || allocs < 1 || ring_size < 1) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
#if defined(USE_BOEHM)
    boehm_init();
#endif
    static pthread_t tid[MAX_THREADS];
    static Thread st[MAX_THREADS];
    double start = now_ns();
    for (int i = 0; i < threads; i++) {
        st[i].tag = (uint64_t)i;
        if (pthread_create(&tid[i], NULL, run, &st[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
    double elapsed = now_ns() - start;
    printf("TIME %.3f\n", elapsed / 1e6);
    unsigned long long check = 0;
    for (int i = 0; i < threads; i++) check += st[i].sum;
    double ns = elapsed / ((double)threads * (double)allocs);
#if defined(USE_BOEHM)
    boehm_result_ns(check, ns);
#else
    print_result_ns(check, -1, -1, ns);
#endif
    return 0;
}
