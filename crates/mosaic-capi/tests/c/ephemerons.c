/* Ephemerons: the value is kept while the key is reachable by other paths,
 * and both words become NULL when the key dies; a value that refers back
 * to its key does not keep it; chains of ephemerons reach their fixed
 * point; mosaic_ephemeron_set replaces both words; the layout is two
 * pointer words readable in place. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mosaic.h"
#include "check.h"
#include "obj.h"

static int dead(mosaic_weak *w) { return mosaic_weak_get(w) == NULL; }

int main(void) {
    alarm(120);
    mosaic_embedder e = {.trace = trace_obj};
    mosaic_heap *h = verified_heap(&e);
    mosaic_mutator *m = mosaic_mutator_new(h);

    /* Key reachable: the value lives, only through the ephemeron. */
    Obj *k = new_obj(m, 1), *v = new_obj(m, 2);
    mosaic_root *rk = mosaic_root_new(m, k);
    v->ref = k; /* the value refers back to its key */
    void *eph = mosaic_ephemeron_new(m, k, v);
    CHECK(eph != NULL && mosaic_last_error() == MOSAIC_OK, "ephemeron_new: %s", mosaic_last_error_message());
    mosaic_root *re = mosaic_root_new(m, eph);
    CHECK(mosaic_object_size(h, eph) >= 16, "an ephemeron is a heap object of 16 bytes");
    CHECK(((void **)eph)[0] == k && ((void **)eph)[1] == v, "layout: key word then value word");
    mosaic_weak *wv = mosaic_weak_new(m, v, MOSAIC_WEAK_SHORT);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 20000; j++) mosaic_alloc(m, sizeof(Obj), 0);
        mosaic_collect(m);
        CHECK(mosaic_ephemeron_key(h, eph) == k && mosaic_ephemeron_value(h, eph) == v, "round %d: kept", i);
        CHECK(mosaic_last_error() == MOSAIC_OK, "ephemeron_value error");
        CHECK(!dead(wv) && v->id == 2 && v->ref == k, "round %d: value intact", i);
    }
    mosaic_stats st;
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 3, "key, value and ephemeron marked: %llu", (unsigned long long)st.last_marked);

    /* Key dead: both words NULL, the value reclaimed with it. */
    mosaic_root_free(rk);
    mosaic_collect(m);
    CHECK(((void **)eph)[0] == NULL && ((void **)eph)[1] == NULL, "cleared in place");
    CHECK(mosaic_ephemeron_key(h, eph) == NULL && mosaic_ephemeron_value(h, eph) == NULL, "cleared");
    CHECK(mosaic_last_error() == MOSAIC_OK, "reading a cleared ephemeron is no error");
    CHECK(dead(wv), "the value died with its key");
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 1, "only the ephemeron marked: %llu", (unsigned long long)st.last_marked);
    mosaic_weak_free(wv);

    /* Reused with mosaic_ephemeron_set; a value outside the heap. */
    static Obj outside = {.id = 42};
    Obj *k2 = new_obj(m, 3);
    mosaic_root *rk2 = mosaic_root_new(m, k2);
    CHECK(mosaic_ephemeron_set(m, eph, k2, &outside) == MOSAIC_OK, "set: %s", mosaic_last_error_message());
    mosaic_collect(m);
    CHECK(mosaic_ephemeron_key(h, eph) == k2 && mosaic_ephemeron_value(h, eph) == &outside, "set kept");
    Obj *v2 = new_obj(m, 4);
    CHECK(mosaic_ephemeron_set(m, eph, k2, v2) == MOSAIC_OK, "set again");
    mosaic_collect(m);
    CHECK(mosaic_ephemeron_value(h, eph) == v2 && v2->id == 4, "new value kept");
    CHECK(mosaic_ephemeron_set(m, eph, NULL, NULL) == MOSAIC_OK, "clear");
    mosaic_collect(m);
    CHECK(mosaic_ephemeron_key(h, eph) == NULL && mosaic_ephemeron_value(h, eph) == NULL, "cleared by set");
    mosaic_root_free(rk2);

    /* A chain: e1 = (k1 -> a), e2 = (a -> b), e3 = (b -> c), all rooted,
     * created in the worst order for a naive fixed point. */
    Obj *k1 = new_obj(m, 10);
    mosaic_root *rk1 = mosaic_root_new(m, k1);
    Obj *a = new_obj(m, 11), *b = new_obj(m, 12), *cc = new_obj(m, 13);
    mosaic_root *r3 = mosaic_root_new(m, mosaic_ephemeron_new(m, b, cc));
    mosaic_root *r2 = mosaic_root_new(m, mosaic_ephemeron_new(m, a, b));
    mosaic_root *r1 = mosaic_root_new(m, mosaic_ephemeron_new(m, k1, a));
    mosaic_weak *wc = mosaic_weak_new(m, cc, MOSAIC_WEAK_SHORT);
    mosaic_collect(m);
    CHECK(mosaic_ephemeron_value(h, mosaic_root_get(r3)) == cc && !dead(wc) && cc->id == 13, "chain kept");
    mosaic_root_free(rk1);
    mosaic_collect(m);
    CHECK(dead(wc), "chain released with its first key");
    CHECK(mosaic_ephemeron_key(h, mosaic_root_get(r1)) == NULL && mosaic_ephemeron_key(h, mosaic_root_get(r2)) == NULL &&
              mosaic_ephemeron_key(h, mosaic_root_get(r3)) == NULL,
          "chain cleared");
    mosaic_weak_free(wc);

    /* An unreachable ephemeron is reclaimed like any object, and keeps
     * nothing alive. */
    mosaic_root_free(r1);
    mosaic_root_free(r2);
    mosaic_root_free(r3);
    mosaic_root_free(re);
    Obj *k3 = new_obj(m, 20);
    mosaic_root *rk3 = mosaic_root_new(m, k3);
    Obj *v3 = new_obj(m, 21);
    void *lost = mosaic_ephemeron_new(m, k3, v3);
    mosaic_weak *wv3 = mosaic_weak_new(m, v3, MOSAIC_WEAK_SHORT);
    mosaic_collect(m);
    CHECK(dead(wv3), "a dead ephemeron kept its value");
    CHECK(mosaic_ephemeron_key(h, lost) == NULL && mosaic_last_error() == MOSAIC_ERR_INVALID_ARGUMENT,
          "a reclaimed ephemeron is no longer one");
    mosaic_heap_stats(h, &st);
    CHECK(st.last_marked == 1, "only the key marked: %llu", (unsigned long long)st.last_marked);
    mosaic_weak_free(wv3);
    mosaic_root_free(rk3);

    mosaic_mutator_free(m);
    mosaic_heap_free(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
