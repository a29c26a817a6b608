/* GC_set_max_heap_size after GC_INIT: the heap stops growing at the limit
 * (allocation returns NULL through the out-of-memory function once the
 * live data no longer fits, nothing kept is lost), and 0 lifts the limit.
 * Prints one "<check>: ok" line per check. */
#include <gc.h>
#include <stdio.h>
#include <string.h>

#define OBJ 4000
#define SLOTS 16384 /* 64 MB of objects at most */
#define LIMIT (16u << 20)

static void *quiet_oom(size_t n) {
    (void)n;
    return NULL;
}

static void quiet_warn(char *msg, GC_word arg) {
    (void)msg;
    (void)arg;
}

int main(void) {
    GC_INIT();
    GC_set_oom_fn(quiet_oom);
    GC_set_warn_proc(quiet_warn);
    GC_set_max_heap_size(LIMIT);
    unsigned char **keep = GC_MALLOC(SLOTS * sizeof(void *));
    int n = 0;
    while (n < SLOTS) {
        unsigned char *o = GC_MALLOC_ATOMIC(OBJ);
        if (o == NULL)
            break;
        memset(o, n & 0xff, OBJ);
        keep[n++] = o;
    }
    size_t kept = (size_t)n * OBJ;
    if (n == SLOTS || kept > LIMIT || kept < LIMIT / 4) {
        printf("the limit holds: %d objects (%zu bytes) kept under a %u-byte limit\n", n, kept, LIMIT);
        return 1;
    }
    printf("the limit holds: ok\n");
    GC_set_max_heap_size(0);
    int more = 0;
    for (; more < 1000; more++) {
        unsigned char *o = GC_MALLOC_ATOMIC(OBJ);
        if (o == NULL)
            break;
        memset(o, 0xab, OBJ);
        if (n + more < SLOTS)
            keep[n + more] = o;
    }
    int intact = 1;
    for (int i = 0; i < n; i++)
        if (keep[i][0] != (i & 0xff) || keep[i][OBJ - 1] != (i & 0xff))
            intact = 0;
    if (more < 1000 || !intact) {
        printf("0 lifts the limit: %d more allocated, kept objects %s\n", more,
               intact ? "intact" : "damaged");
        return 1;
    }
    printf("0 lifts the limit: ok\n");
    return 0;
}
