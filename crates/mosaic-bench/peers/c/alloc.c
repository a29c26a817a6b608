/* malloc + free microbenchmark: ns per allocation of SIZE bytes, allocating
 * a window of 256 objects then freeing them. Built three ways: glibc,
 * jemalloc (-DUSE_JEMALLOC, mallocx/dallocx) and mimalloc (-DUSE_MIMALLOC).
 * usage: alloc SIZE COUNT */
#include "malloc_peer.h"

int main(int argc, char **argv) {
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 32;
    long count = argc > 2 ? atol(argv[2]) : 10000000;
    void *window[256];
    unsigned long long sum = 0;
    double t = now_ns();
    for (long done = 0; done < count; done += 256) {
        for (int i = 0; i < 256; i++) {
            window[i] = ALLOC(size);
            *(volatile char *)window[i] = 1;
        }
        for (int i = 0; i < 256; i++) {
            sum += (uintptr_t)window[i] & 1;
            FREE(window[i]);
        }
    }
    double ns = (now_ns() - t) / (double)((count + 255) / 256 * 256);
    printf("RESULT {\"check\": %llu, \"ns_per_alloc\": %.4f}\n", sum * 0, ns);
    return 0;
}
