/* The C tests' assertion: CHECK(cond, printf-style message) counts a
 * failure and reports where; each program prints "N failures" last. */
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

#endif
