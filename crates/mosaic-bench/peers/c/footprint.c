/* Footprint of an almost empty Boehm heap: resident memory (VmRSS) before
 * GC_INIT, after it, after one 16-byte GC_MALLOC, and after a collection;
 * the same steps as Mosaic's footprint worker (src/footprint_bench.rs).
 * Configured as boehm.h configures every peer (parallel markers started).
 * usage: footprint   (prints RESULT {"check": 1, "base_kb", ...}) */
#include <string.h>
#include "boehm.h"

int main(void) {
    long base = rss_kb();
    boehm_init();
    long heap = rss_kb();
    void **p = GC_MALLOC(16);
    p[0] = p;
    long alloc = rss_kb();
    GC_gcollect();
    long collect = rss_kb();
    printf("RESULT {\"check\": %d, \"base_kb\": %ld, \"heap_kb\": %ld, \"alloc_kb\": %ld, \"collect_kb\": %ld}\n",
           p[0] == p, base, heap, alloc, collect);
    return 0;
}
