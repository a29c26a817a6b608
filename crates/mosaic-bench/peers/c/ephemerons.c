/* A weak-keyed table on the Boehm collector, the steps of Mosaic's worker
 * (src/workloads/refs.rs, `--only ephemerons`). Boehm has no ephemerons:
 * this is the usual Boehm weak table. Each entry is a record (GC_MALLOC,
 * 16 bytes) holding its key hidden (GC_HIDE_POINTER, so the collector does
 * not see it as a reference) and its value; the hidden key word is a
 * disappearing link (GC_general_register_disappearing_link), cleared when
 * the key dies. The value is held strongly (a key reachable from its value
 * would never die: the limit ephemerons remove).
 *
 * N keys and N values (16 bytes each, GC_MALLOC_ATOMIC: id, padding), the
 * entries in an array (the table); every key is also held by a second
 * array while the table is filled. Then every 10th key is kept (a third
 * array), the second array dropped, GC_gcollect. Check: exactly the dropped
 * keys' links read NULL (their values stay alive: the table holds them
 * until it removes the entry), and every kept entry still holds its key
 * and a value with the key's id. Configured by boehm.h (no
 * interior pointers: GC_MALLOC(16) takes 16 bytes; parallel markers).
 * Prints TIME (allocation, insertion, dropping the keys, the collection)
 * and
 *   RESULT {"check", "n", "kept", "kept_ok", "cleared_ok", "ns_per_insert",
 *           "rss_bytes_per_entry": VmRSS after the insertion loop minus
 *           before, over N, "key_value_bytes": 32, "collections"}
 * and exits 1 if the check failed.
 * usage: ephemerons [N]   (N = 781000 by default) */
#include "boehm.h"

typedef struct Obj {
    uintptr_t id, pad;
} Obj;

typedef struct Entry {
    GC_hidden_pointer key; /* a disappearing link: 0 once the key died */
    Obj *value;
} Entry;

/* The roots (statics, scanned by the collector). */
static Obj **keys;    /* every key, while the table is filled */
static Entry **table; /* the entries */
static Obj **kept;    /* every 10th key */

static Obj *new_obj(uintptr_t id) {
    Obj *o = GC_MALLOC_ATOMIC(sizeof(Obj));
    o->id = id;
    o->pad = 0;
    return o;
}

/* Not inlined: its locals (pointers to keys) are dead, and its frame
 * overwritten, before the collection that must find nine keys in ten
 * unreachable. */
static __attribute__((noinline)) void insert_all(long n) {
    table = GC_MALLOC(n * sizeof(Entry *));
    for (long i = 0; i < n; i++) {
        Obj *k = new_obj(i);
        keys[i] = k;
        Entry *e = GC_MALLOC(sizeof(Entry));
        e->key = GC_HIDE_POINTER(k);
        e->value = new_obj(i);
        if (GC_general_register_disappearing_link((void **)&e->key, k) != GC_SUCCESS) abort();
        table[i] = e;
    }
}

static __attribute__((noinline)) void keep_every_10th(long n) {
    kept = GC_MALLOC(((n + 9) / 10) * sizeof(Obj *));
    for (long j = 0; j < (n + 9) / 10; j++) kept[j] = keys[10 * j];
    keys = NULL;
}

/* Overwrites the stack below the caller with zeroes (stale key pointers
 * there would keep keys alive: the collector scans the stack
 * conservatively). */
static __attribute__((noinline)) void clear_stack(void) {
    volatile char buf[16384];
    memset((char *)buf, 0, sizeof buf);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 781000;
    long nkept = (n + 9) / 10;
    boehm_init();
    double start = now_ns();
    keys = GC_MALLOC(n * sizeof(Obj *));
    long before = rss_kb();
    double t0 = now_ns();
    insert_all(n);
    double ns = n > 0 ? (now_ns() - t0) / n : 0;
    long after = rss_kb();
    keep_every_10th(n);
    clear_stack();
    GC_gcollect();
    printf("TIME %.3f\n", (now_ns() - start) / 1e6);
    /* Read outside any collection: this program's only thread allocates
     * nothing here, so no collection can clear a link between the read and
     * its use (a multithreaded program would reveal under
     * GC_call_with_alloc_lock). */
    long kept_ok = 0, cleared_ok = 0;
    for (long i = 0; i < n; i++) {
        Entry *e = table[i];
        if (i % 10 == 0) {
            Obj *k = e->key ? GC_REVEAL_POINTER(e->key) : NULL;
            if (k && k == kept[i / 10] && k->id == (uintptr_t)i && e->value->id == (uintptr_t)i) kept_ok++;
        } else if (!e->key) {
            cleared_ok++;
        }
    }
    int ok = kept_ok == nkept && cleared_ok == n - nkept;
    printf("RESULT {\"check\": %d, \"n\": %ld, \"kept\": %ld, \"kept_ok\": %ld, \"cleared_ok\": %ld, "
           "\"ns_per_insert\": %.2f, \"rss_bytes_per_entry\": %.2f, \"key_value_bytes\": %d, \"collections\": %lu}\n",
           ok, n, nkept, kept_ok, cleared_ok, ns, n > 0 ? (after - before) * 1024.0 / n : 0.0,
           (int)(2 * sizeof(Obj)), (unsigned long)GC_get_gc_no());
    if (!ok)
        fprintf(stderr, "check failed: %ld of %ld kept entries intact, %ld of %ld dropped entries cleared\n", kept_ok,
                nkept, cleared_ok, n - nkept);
    return ok ? 0 : 1;
}
