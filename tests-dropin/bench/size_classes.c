/* A measurement, not a test: T threads each allocate N objects of K sizes
 * (16, 32, ... 16K bytes) that die at once, so the live set is nearly
 * empty and the heap stays at its floor. Prints the collections and the
 * heap size; time it on each library (BENCHMARKS.md, twenty-third
 * session). Build: cc -O1 -pthread -I/usr/include/gc size_classes.c -lgc
 * Run: ./a.out T N K (T at most 8), e.g. ./a.out 1 1000000 50 */
#define GC_THREADS
#include <gc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int n, k;

static void *work(void *arg) {
    (void)arg;
    for (int i = 0; i < n; i++) {
        long *p = GC_MALLOC(16 + (i % k) * 16);
        p[0] = i;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int t = atoi(argv[1]);
    n = atoi(argv[2]);
    k = atoi(argv[3]);
    if (t < 1 || t > 8 || k < 1) return 2;
    GC_INIT();
    pthread_t th[8];
    for (int i = 1; i < t; i++) pthread_create(&th[i], NULL, work, NULL);
    work(NULL);
    for (int i = 1; i < t; i++) pthread_join(th[i], NULL);
    printf("collections %lu heap %lu\n", (unsigned long)GC_get_gc_no(),
           (unsigned long)GC_get_heap_size());
    return 0;
}
