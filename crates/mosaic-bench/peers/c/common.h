/* Shared by the C peers: the deterministic RNG (same as the Rust, Java and
 * Go versions), a clock, and the RESULT line the runner parses. */
#ifndef MOSAIC_BENCH_COMMON_H
#define MOSAIC_BENCH_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state = 42;
static inline uint64_t rng_next(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}
/* 16 * 2^k with probability 2^-(k+1), k <= 7, plus a uniform part below. */
static inline size_t rng_power_law_size(void) {
    uint64_t r = rng_next();
    int k = r ? __builtin_ctzll(r) : 64;
    if (k > 7) k = 7;
    size_t base = (size_t)16 << k;
    return base + (size_t)(rng_next() % base);
}

/* Resident memory of this process (VmRSS), KiB; -1 if unreadable. */
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
    if (f) fclose(f);
    return kb;
}

static inline double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Pause recording (filled by collectors that report collection events). */
#define MAX_PAUSES 100000
static double pauses_ns[MAX_PAUSES];
static long npauses;
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* The RESULT line; a negative collections, gc_ms or ns_per_alloc is left out. */
static void print_result_ns(unsigned long long check, long collections, double gc_ms, double ns_per_alloc) {
    printf("RESULT {\"check\": %llu", check);
    if (ns_per_alloc >= 0) printf(", \"ns_per_alloc\": %.4f", ns_per_alloc);
    if (collections >= 0) printf(", \"collections\": %ld", collections);
    if (gc_ms >= 0) printf(", \"gc_ms\": %.3f", gc_ms);
    if (npauses > 0) {
        qsort(pauses_ns, npauses, sizeof(double), cmp_double);
        printf(", \"pause_p50_us\": %.3f, \"pause_p99_us\": %.3f, \"pause_max_us\": %.3f",
               pauses_ns[npauses / 2] / 1e3, pauses_ns[(long)(npauses * 0.99)] / 1e3, pauses_ns[npauses - 1] / 1e3);
    }
    printf("}\n");
}
static inline void print_result(unsigned long long check, long collections, double gc_ms) {
    print_result_ns(check, collections, gc_ms, -1);
}
#endif
