/* MOSAIC_COMPACT=auto, MOSAIC_COMPACT_TOWARD=address and
 * MOSAIC_VERIFY_COMPACTION=1 (set by the test harness) fill the compaction
 * fields of mosaic_config_from_env; mosaic_config_default ignores them; a
 * bad value is MOSAIC_ERR_CONFIG naming the variable. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mosaic.h"
#include "check.h"

static void trace(void *ctx, void *obj, mosaic_tracer *t) {
    (void)ctx;
    (void)obj;
    (void)t;
}

int main(void) {
    mosaic_config c;
    CHECK(mosaic_config_from_env(&c) == MOSAIC_OK, "from_env: %s", mosaic_last_error_message());
    CHECK(c.compact == MOSAIC_COMPACT_AUTO, "compact %u", c.compact);
    CHECK(c.compact_toward == MOSAIC_COMPACT_ADDRESS, "compact_toward %u", c.compact_toward);
    CHECK(c.verify_compaction, "verify_compaction not set");

    mosaic_embedder e = {.trace = trace};
    mosaic_heap *h = mosaic_heap_new(&c, &e);
    CHECK(h != NULL, "heap: %s", mosaic_last_error_message());
    mosaic_heap_free(h);

    CHECK(mosaic_config_default(&c) == MOSAIC_OK, "default");
    CHECK(c.compact == MOSAIC_COMPACT_NEVER && c.compact_toward == MOSAIC_COMPACT_PINNED_FIRST &&
              !c.verify_compaction,
          "defaults: %u %u %d", c.compact, c.compact_toward, c.verify_compaction);

    setenv("MOSAIC_COMPACT", "sometimes", 1);
    CHECK(mosaic_config_from_env(&c) == MOSAIC_ERR_CONFIG, "from_env with a bad MOSAIC_COMPACT");
    CHECK(strstr(mosaic_last_error_message(), "MOSAIC_COMPACT=\"sometimes\"") != NULL, "message: %s",
          mosaic_last_error_message());
    CHECK(c.compact == MOSAIC_COMPACT_NEVER, "not the default after a bad variable: %u", c.compact);
    setenv("MOSAIC_COMPACT", "always", 1);
    setenv("MOSAIC_COMPACT_TOWARD", "left", 1);
    CHECK(mosaic_config_from_env(&c) == MOSAIC_ERR_CONFIG, "from_env with a bad MOSAIC_COMPACT_TOWARD");
    CHECK(strstr(mosaic_last_error_message(), "MOSAIC_COMPACT_TOWARD") != NULL, "message: %s",
          mosaic_last_error_message());

    printf("%d failures\n", failures);
    return failures != 0;
}
