/* The malloc peers' allocation calls, chosen at build time: glibc (the
 * default), jemalloc (-DUSE_JEMALLOC: mallocx/dallocx) or mimalloc
 * (-DUSE_MIMALLOC). */
#ifndef MOSAIC_BENCH_MALLOC_PEER_H
#define MOSAIC_BENCH_MALLOC_PEER_H
#include "common.h"
#if defined(USE_JEMALLOC)
#include <jemalloc/jemalloc.h>
#define ALLOC(n) mallocx((n), 0)
#define FREE(p) dallocx((p), 0)
#elif defined(USE_MIMALLOC)
#include <mimalloc.h>
#define ALLOC(n) mi_malloc(n)
#define FREE(p) mi_free(p)
#else
#define ALLOC(n) malloc(n)
#define FREE(p) free(p)
#endif
#endif
