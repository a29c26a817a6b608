/* The C tests' assertion: CHECK(cond, printf-style message) counts a
 * failure and reports where; each program prints "N failures" last.
 * Included after mosaic.h, it also gives EXPECT_ERROR, EXPECT_INVALID
 * and verified_heap(). */
#ifndef MOSAIC_TEST_CHECK_H
#define MOSAIC_TEST_CHECK_H
#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

#ifdef MOSAIC_H
#include <string.h>

/* The last error is `want` and its message names `fn`. */
#define EXPECT_ERROR(want, fn)                                                                   \
    do {                                                                                         \
        mosaic_error got_ = mosaic_last_error();                                                 \
        const char *msg_ = mosaic_last_error_message();                                          \
        CHECK(got_ == (want), "%s: error %d, expected %d (%s)", fn, (int)got_, (int)(want), msg_); \
        CHECK(strstr(msg_, fn) != NULL, "%s: message does not name it: \"%s\"", fn, msg_);      \
    } while (0)
#define EXPECT_INVALID(fn) EXPECT_ERROR(MOSAIC_ERR_INVALID_ARGUMENT, fn)

/* A 64 MiB heap in verify mode for embedder `e` (failure is counted). */
static inline mosaic_heap *verified_heap(const mosaic_embedder *e) {
    mosaic_config c;
    mosaic_config_default(&c);
    c.max_heap = 64u << 20;
    c.verify = true;
    mosaic_heap *h = mosaic_heap_new(&c, e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    return h;
}
#endif

#endif
