/* GC_malloc_many and GC_generic_malloc_many of bdwgc's own kinds: lists
 * linked through word 0 (GC_NEXT), each object at least the size asked
 * for, its own base, distinct, a scanned one cleared past its link; a
 * scanned list held only by its head keeps every object through
 * collections (its links are scanned), so their contents survive garbage
 * of the same size allocated after; lists taken across many runs hand out
 * no object twice while they are alive. Prints one "<check>: ok" line per
 * check. */
#include <gc.h>
#include <gc/gc_inline.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LISTS 400

/* Multiples of bdwgc's 16-byte granule, as GC_generic_malloc_many wants. */
static size_t sizes[] = {16, 32, 48, 96, 512, 2000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Every object of every list of size i, kept reachable. */
static void *heads[NSIZES][LISTS];

static int list_ok(void *head, size_t n, int scanned, int *count) {
    int c = 0;
    for (void *p = head; p != NULL; p = GC_NEXT(p)) {
        if (GC_base(p) != p || GC_size(p) < n)
            return 0;
        if (scanned)
            for (size_t w = 1; w < n / sizeof(void *); w++)
                if (((void **)p)[w] != NULL)
                    return 0;
        c++;
    }
    *count = c;
    return c > 0;
}

/* What word w of an object of list `tag` holds once filled. */
static uintptr_t pattern(const void *p, size_t w, uintptr_t tag) {
    return ((uintptr_t)p >> 4) * 31u + w * 7u + tag * 1000003u + 1u;
}

static void fill(void *head, size_t n, uintptr_t tag) {
    for (void *p = head; p != NULL; p = GC_NEXT(p))
        for (size_t w = 1; w < n / sizeof(void *); w++)
            ((uintptr_t *)p)[w] = pattern(p, w, tag);
}

static int intact(void *head, size_t n, uintptr_t tag) {
    for (void *p = head; p != NULL; p = GC_NEXT(p))
        for (size_t w = 1; w < n / sizeof(void *); w++)
            if (((uintptr_t *)p)[w] != pattern(p, w, tag))
                return 0;
    return 1;
}

static void *__attribute__((noinline)) garbage(size_t n, int rounds) {
    void *last = NULL;
    for (int i = 0; i < rounds; i++) {
        last = GC_MALLOC(n);
        memset(last, 0xee, n);
    }
    return last;
}

int main(void) {
    GC_INIT();

    int shape_ok = 1, atomic_ok = 1, total = 0;
    for (size_t i = 0; i < NSIZES; i++) {
        for (int l = 0; l < LISTS; l++) {
            int c = 0;
            heads[i][l] = GC_malloc_many(sizes[i]);
            if (!list_ok(heads[i][l], sizes[i], 1, &c))
                shape_ok = 0;
            total += c;
            fill(heads[i][l], sizes[i], i * LISTS + l);
        }
        void *atomic = NULL;
        GC_generic_malloc_many(sizes[i], GC_I_PTRFREE, &atomic);
        int c = 0;
        if (!list_ok(atomic, sizes[i], 0, &c))
            atomic_ok = 0;
    }
    printf("lists of every size, linked, sized, own bases, cleared (%d objects): %s\n", total,
           shape_ok ? "ok" : "WRONG");
    printf("pointer-free lists, linked and sized: %s\n", atomic_ok ? "ok" : "WRONG");

    /* No object is in two live lists: a later list's fill would have
     * overwritten an earlier one's (and its link, cutting that list). */
    int distinct = 1;
    for (size_t i = 0; i < NSIZES; i++)
        for (int l = 0; l < LISTS; l++)
            if (!intact(heads[i][l], sizes[i], i * LISTS + l))
                distinct = 0;
    printf("no object handed out twice: %s\n", distinct ? "ok" : "WRONG");

    /* Held by their heads only: collections and same-size garbage after
     * them leave every object of every list as it was. */
    for (int round = 0; round < 3; round++) {
        GC_gcollect();
        for (size_t i = 0; i < NSIZES; i++)
            garbage(sizes[i], 20000);
    }
    int kept = 1;
    for (size_t i = 0; i < NSIZES; i++)
        for (int l = 0; l < LISTS; l++)
            if (!intact(heads[i][l], sizes[i], i * LISTS + l))
                kept = 0;
    printf("a list held by its head survives collections intact: %s\n", kept ? "ok" : "WRONG");
    return 0;
}
