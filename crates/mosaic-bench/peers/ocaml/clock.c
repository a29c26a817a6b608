/* A monotonic clock for the OCaml peers: the same clock_gettime
 * (CLOCK_MONOTONIC) as the C peers' now_ns and Rust's Instant. OCaml 4.13's
 * standard library has no monotonic clock (Unix.gettimeofday is the wall
 * clock, which NTP may step or slew). */
#include <time.h>
#include <caml/alloc.h>
#include <caml/mlvalues.h>

value mosaic_monotonic_ms(value unit) {
    (void)unit;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return caml_copy_double((double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6);
}
