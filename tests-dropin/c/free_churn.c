/* Explicit-free churn: a live table of 20000 strings is rewritten 4M times;
 * each step builds a temporary buffer, copies it into a new entry and
 * frees the buffer and the entry it replaces with GC_FREE (as C programs
 * that manage their own memory on top of the collector do). Prints a
 * checksum, collections and heap size. */
#include <gc.h>
#include <stdio.h>
#include <string.h>

#define LIVE 20000
#define STEPS 4000000

int main(void) {
    GC_INIT();
    static char *table[LIVE];
    unsigned long x = 12345, sum = 0;
    for (long i = 0; i < STEPS; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        size_t n = 16 + (x >> 33) % 240;
        char *tmp = GC_MALLOC_ATOMIC(n);
        memset(tmp, 'a' + i % 26, n - 1);
        tmp[n - 1] = 0;
        char *e = GC_MALLOC_ATOMIC(n);
        memcpy(e, tmp, n);
        GC_FREE(tmp);
        size_t k = (x >> 17) % LIVE;
        if (table[k]) {
            sum += strlen(table[k]) + (unsigned char)table[k][0];
            GC_FREE(table[k]);
        }
        table[k] = e;
    }
    printf("checksum %lu\n", sum);
    fprintf(stderr, "collections %lu heap %lu\n", (unsigned long)GC_get_gc_no(), (unsigned long)GC_get_heap_size());
    return 0;
}
