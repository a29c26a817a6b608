/* GC_gcollect_and_unmap gives the free heap back to the OS (it shows in
 * GC_get_unmapped_bytes) where GC_gcollect keeps it, and so does
 * GC_gcollect once GC_set_force_unmap_on_gcollect(1) is set; what is live
 * stays intact. (bdwgc 8.2.2 unmaps only blocks already free at an
 * earlier collection, so there the third check finds nothing unmapped:
 * the blocks were reused since.) Prints one "<check>: ok" line per
 * check. */
#include <gc.h>
#include <stdio.h>

#define MIB (1024 * 1024)

struct node {
    struct node *next;
    long id;
};

static struct node *keep;

static void garbage(void) {
    for (long i = 0; i < 40L * MIB / 64; i++) {
        struct node *n = GC_MALLOC(64);
        n->id = i;
    }
}

static int intact(long n) {
    long want = n;
    for (struct node *p = keep; p; p = p->next)
        if (p->id != --want)
            return 0;
    return want == 0;
}

static void check(const char *what, int ok) {
    printf("%s: %s\n", what, ok ? "ok" : "FAILED");
}

int main(void) {
    GC_INIT();
    long n = 4L * MIB / sizeof(struct node);
    for (long i = 0; i < n; i++) {
        struct node *p = GC_MALLOC(sizeof *p);
        p->next = keep;
        p->id = i;
        keep = p;
    }
    garbage();
    GC_gcollect();
    size_t heap = GC_get_heap_size(), kept = heap - GC_get_unmapped_bytes();
    GC_gcollect_and_unmap();
    size_t after = GC_get_heap_size() - GC_get_unmapped_bytes();
    check("GC_gcollect_and_unmap gives free pages back", after + 2 * MIB < kept);
    check("the live list is intact", intact(n));
    garbage();
    GC_gcollect();
    size_t again = GC_get_heap_size() - GC_get_unmapped_bytes();
    GC_set_force_unmap_on_gcollect(1);
    garbage();
    GC_gcollect();
    size_t forced = GC_get_heap_size() - GC_get_unmapped_bytes();
    check("with force_unmap_on_gcollect, GC_gcollect does too", forced + 2 * MIB < again);
    check("the live list is still intact", intact(n));
    fprintf(stderr, "mapped: %zu KiB kept, %zu after unmap, %zu again, %zu forced\n", kept >> 10,
            after >> 10, again >> 10, forced >> 10);
    return 0;
}
