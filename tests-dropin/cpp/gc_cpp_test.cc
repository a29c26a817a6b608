// A client of bdwgc's C++ interface (gc_cpp.h, gc_allocator.h), written for
// the drop-in test harness (scripts/dropin/run-tests.sh). It prints only
// facts that hold for any correct collector (counts it controls, yes/no
// answers to checks that allow for conservative retention), so its output
// can be compared byte for byte between two libgc.so.1 builds; the exact
// counts, which conservative scanning may change, go to stderr. Exit status 0
// when every check passed, 1 otherwise.
//
// Build: g++ -O2 -I/usr/include/gc gc_cpp_test.cc -lgccpp -lgc
// (libgccpp.so.1 replaces the global operator new/delete with
// GC_malloc_uncollectable/GC_free, so every plain `new` below, and the
// standard library's own, goes through libgc too.)

#include <gc_cpp.h>
#include <gc_allocator.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char *what) {
    std::printf("%-60s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) failures++;
}

// Objects without finalization, collectable.
struct Node : public gc {
    Node *next;
    long value;
    Node(Node *n, long v) : next(n), value(v) {}
};

// Objects whose destructor runs when the collector finds them unreachable.
// `destroyed` is a static (plain data, not scanned for pointers into the
// GC heap other than these ints), indexed by the object's id.
const int kCleanupCount = 20000;
const int kKeptCount = 200;
unsigned char destroyed[kCleanupCount + kKeptCount];
int destructor_calls = 0;
// Destructors of the NoGC objects of part 3 (negative ids) only: an object
// of part 2 that a stale stack word kept may still be finalized meanwhile.
int nogc_destructor_calls = 0;

struct Tracked : public gc_cleanup {
    int id;
    char payload[48];
    explicit Tracked(int i) : id(i) { std::memset(payload, i & 0xff, sizeof payload); }
    ~Tracked() {
        if (id >= 0 && id < kCleanupCount + kKeptCount) destroyed[id]++;
        destructor_calls++;
        if (id < 0) nogc_destructor_calls++;
    }
};

// A class that does not derive from gc: placed in the GC heap with new (GC).
struct Plain {
    int a[8];
    Plain() { for (int i = 0; i < 8; i++) a[i] = i * i; }
};

int cleanup_fn_calls = 0;
void count_cleanup(void *obj, void *data) {
    (void)obj;
    cleanup_fn_calls += (int)(GC_word)data;
}

// Kept reachable through a static array (static data is a root).
Tracked *kept[kKeptCount];

// Overwrite a good part of the stack so no stale copies of dropped pointers
// survive in dead frames (the test is then less at the mercy of
// conservative scanning; the thresholds below still allow for some).
__attribute__((noinline)) void clear_stack() {
    volatile char buf[64 * 1024];
    std::memset((char *)buf, 0, sizeof buf);
}

__attribute__((noinline)) void make_garbage_tracked() {
    for (int i = 0; i < kCleanupCount; i++) {
        Tracked *t = new Tracked(i);
        if (t->payload[0] != (char)(i & 0xff)) failures++;
    }
}

__attribute__((noinline)) void make_kept_tracked() {
    for (int i = 0; i < kKeptCount; i++) kept[i] = new Tracked(kCleanupCount + i);
}

__attribute__((noinline)) long build_and_sum_list(int n) {
    Node *head = 0;
    for (int i = 0; i < n; i++) head = new Node(head, i);
    long sum = 0;
    for (Node *p = head; p; p = p->next) sum += p->value;
    return sum;
}

__attribute__((noinline)) int make_garbage_plain_with_cleanup(int n) {
    for (int i = 0; i < n; i++) {
        Plain *p = new (GC, count_cleanup, (void *)(GC_word)1) Plain;
        if (p->a[3] != 9) return 0;
    }
    return 1;
}

void collect_hard() {
    for (int i = 0; i < 6; i++) {
        clear_stack();
        GC_gcollect();
        GC_invoke_finalizers();
    }
}

}  // namespace

int main() {
    GC_INIT();
    std::printf("gc_cpp client test\n");

    // 1. Many small collectable objects in long lists, collected as we go.
    bool sums_ok = true;
    for (int round = 0; round < 20; round++) {
        long n = 50000 + round * 1000;
        if (build_and_sum_list((int)n) != n * (n - 1) / 2) sums_ok = false;
    }
    check(sums_ok, "20 lists of 50000+ gc nodes, sums right");

    // 2. gc_cleanup: destructors of unreachable objects run, reachable ones
    // keep theirs until they are dropped.
    make_kept_tracked();
    make_garbage_tracked();
    collect_hard();
    int garbage_destroyed = 0, twice = 0;
    for (int i = 0; i < kCleanupCount; i++) {
        if (destroyed[i]) garbage_destroyed++;
        if (destroyed[i] > 1) twice++;
    }
    int kept_destroyed = 0, kept_intact = 0;
    for (int i = 0; i < kKeptCount; i++) {
        if (destroyed[kCleanupCount + i]) kept_destroyed++;
        if (kept[i]->id == kCleanupCount + i &&
            kept[i]->payload[47] == (char)((kCleanupCount + i) & 0xff))
            kept_intact++;
    }
    // Exact counts depend on conservative retention: stderr only.
    std::fprintf(stderr, "gc_cleanup garbage destroyed: %d of %d\n", garbage_destroyed,
                 kCleanupCount);
    check(garbage_destroyed >= kCleanupCount * 9 / 10,
          "at least 90% of 20000 unreachable gc_cleanup objects destroyed");
    check(twice == 0, "no destructor ran twice");
    check(kept_destroyed == 0, "no reachable gc_cleanup object destroyed");
    check(kept_intact == kKeptCount, "reachable gc_cleanup objects intact");

    // Drop the kept ones: now they go too.
    for (int i = 0; i < kKeptCount; i++) kept[i] = 0;
    collect_hard();
    kept_destroyed = 0;
    for (int i = 0; i < kKeptCount; i++)
        if (destroyed[kCleanupCount + i]) kept_destroyed++;
    std::fprintf(stderr, "dropped gc_cleanup objects destroyed: %d of %d\n", kept_destroyed,
                 kKeptCount);
    check(kept_destroyed >= kKeptCount * 9 / 10,
          "at least 90% of them destroyed once dropped");

    // 3. new (NoGC): uncollectable, never destroyed by the collector; an
    // explicit delete runs the destructor once.
    int before = nogc_destructor_calls;
    Tracked *pinned[50];
    for (int i = 0; i < 50; i++) pinned[i] = new (NoGC) Tracked(-1 - i);
    // Hide the only references: store them complemented, so no word in
    // any root looks like a pointer to them.
    GC_word hidden[50];
    for (int i = 0; i < 50; i++) {
        hidden[i] = ~(GC_word)pinned[i];
        pinned[i] = 0;
    }
    collect_hard();
    check(nogc_destructor_calls == before, "NoGC objects survive with no visible reference");
    bool pinned_ok = true;
    for (int i = 0; i < 50; i++) {
        Tracked *t = (Tracked *)~hidden[i];
        if (t->id != -1 - i) pinned_ok = false;
        delete t;
    }
    check(pinned_ok, "NoGC objects intact");
    check(nogc_destructor_calls == before + 50, "delete of NoGC objects ran 50 destructors");

    // 4. new (GC) of a class not deriving from gc, with a cleanup function.
    check(make_garbage_plain_with_cleanup(10000), "10000 Plain objects by new (GC, cleanup)");
    collect_hard();
    std::fprintf(stderr, "new (GC, cleanup) cleanups run: %d of 10000\n", cleanup_fn_calls);
    check(cleanup_fn_calls >= 9000, "at least 90% of their cleanup functions ran");

    // 5. Arrays: of gc objects, of ints in the GC heap, of uncollectable ints.
    bool arrays_ok = true;
    for (int round = 0; round < 200; round++) {
        Node *nodes = new Node[64] {
            {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {0, 8},
            {0, 9}, {0, 10}, {0, 11}, {0, 12}, {0, 13}, {0, 14}, {0, 15}, {0, 16},
            {0, 17}, {0, 18}, {0, 19}, {0, 20}, {0, 21}, {0, 22}, {0, 23}, {0, 24},
            {0, 25}, {0, 26}, {0, 27}, {0, 28}, {0, 29}, {0, 30}, {0, 31}, {0, 32},
            {0, 33}, {0, 34}, {0, 35}, {0, 36}, {0, 37}, {0, 38}, {0, 39}, {0, 40},
            {0, 41}, {0, 42}, {0, 43}, {0, 44}, {0, 45}, {0, 46}, {0, 47}, {0, 48},
            {0, 49}, {0, 50}, {0, 51}, {0, 52}, {0, 53}, {0, 54}, {0, 55}, {0, 56},
            {0, 57}, {0, 58}, {0, 59}, {0, 60}, {0, 61}, {0, 62}, {0, 63}, {0, 64}};
        long s = 0;
        for (int i = 0; i < 64; i++) s += nodes[i].value;
        if (s != 64 * 65 / 2) arrays_ok = false;
        int *ints = new (GC) int[4096];
        for (int i = 0; i < 4096; i++) ints[i] = i ^ round;
        int *pinned_ints = new (NoGC) int[256];
        for (int i = 0; i < 256; i++) pinned_ints[i] = ints[i * 16];
        for (int i = 0; i < 256; i++)
            if (pinned_ints[i] != ((i * 16) ^ round)) arrays_ok = false;
        delete[] pinned_ints;
        if (round % 50 == 0) GC_gcollect();
    }
    check(arrays_ok, "200 rounds of gc, GC and NoGC arrays");

    // 6. Standard containers on gc_allocator / traceable_allocator, holding
    // pointers to collectable objects across collections.
    std::vector<Node *, gc_allocator<Node *> > v;
    for (int i = 0; i < 30000; i++) v.push_back(new Node(0, i));
    std::vector<Node *, traceable_allocator<Node *> > tv(v.begin(), v.begin() + 1000);
    collect_hard();
    long vs = 0;
    for (size_t i = 0; i < v.size(); i++) vs += v[i]->value;
    long ts = 0;
    for (size_t i = 0; i < tv.size(); i++) ts += tv[i]->value;
    check(vs == 30000L * 29999 / 2, "gc_allocator vector of 30000 nodes survives collections");
    check(ts == 1000L * 999 / 2, "traceable_allocator vector survives collections");

    // 7. Plain new/delete and the standard library (through libgccpp's
    // global operator new = GC_malloc_uncollectable, delete = GC_free).
    std::map<std::string, int> m;
    char key[32];
    for (int i = 0; i < 20000; i++) {
        std::snprintf(key, sizeof key, "key-%05d", i);
        m[key] = i;
    }
    for (int i = 0; i < 20000; i += 2) {
        std::snprintf(key, sizeof key, "key-%05d", i);
        m.erase(key);
    }
    GC_gcollect();
    long ms = 0;
    for (std::map<std::string, int>::const_iterator it = m.begin(); it != m.end(); ++it)
        ms += it->second;
    check(m.size() == 10000 && ms == 10000L * 10000, "std::map through global new/delete");

    // 8. GC_malloc_atomic / GC_realloc / GC_free from C++ code.
    char *s = (char *)GC_MALLOC_ATOMIC(16);
    std::strcpy(s, "grow");
    for (int i = 0; i < 12; i++) {
        size_t len = std::strlen(s);
        s = (char *)GC_REALLOC(s, 2 * len + 1);
        std::memcpy(s + len, s, len + 1);
    }
    check(std::strlen(s) == 4u << 12 && std::strncmp(s + 4 * 4095, "grow", 4) == 0,
          "GC_REALLOC doubling a string 12 times");
    GC_FREE(s);

    std::printf("%s\n", failures == 0 ? "all checks passed" : "SOME CHECKS FAILED");
    return failures == 0 ? 0 : 1;
}
