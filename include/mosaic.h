/*
 * mosaic.h — C API of the Mosaic garbage collector.
 *
 * One heap per runtime (mosaic_heap_new), one mutator per thread
 * (mosaic_mutator_new). Describe your objects with a mosaic_embedder:
 * trace() calls mosaic_visit() on the address of each reference field,
 * roots() on each root slot; mosaic_embedder says on which thread each
 * callback runs and what it may do. The configuration knobs, their
 * MOSAIC_* environment variables and defaults are tabled at mosaic_config.
 *
 * ERRORS. Functions that can fail return NULL, 0, false or a mosaic_error
 * other than MOSAIC_OK, and set the calling thread's last error:
 * mosaic_last_error() and mosaic_last_error_message() tell why. Every
 * successful call resets it to MOSAIC_OK and "". Exceptions: mosaic_visit
 * and mosaic_visit_ambiguous(_range) (once per edge or word, report
 * nothing) and the *_free functions given NULL
 * (ignored, like free()). Enumerations the library hands out are C enums;
 * those you pass in (mosaic_finalizer_order, mosaic_weak_kind,
 * mosaic_compact_order, and the integer fields of mosaic_config) are integer
 * typedefs with #defined values, so a bad value is an error
 * (MOSAIC_ERR_INVALID_ARGUMENT), not undefined behaviour.
 *
 * THREADS. A thread uses a heap through its own mutator: at most one per
 * thread and heap (a second is refused). A mutator handle, its root
 * handles and its scope belong to the thread that made the mutator: never
 * share them. The functions taking a mosaic_heap may be called from any
 * thread, and mosaic_weak_free too; mosaic_weak_get, mosaic_ephemeron_key
 * and mosaic_ephemeron_value from any thread with an attached mutator of
 * the heap (what they return is an object only until that thread's next
 * safepoint, unless it is stored where the collector looks).
 * Collections stop the world: a collection waits until every other mutator
 * is at a safepoint (every mosaic_alloc is one; call mosaic_safepoint in
 * long loops that do not allocate) or in a blocking region
 * (mosaic_blocking, or mosaic_blocking_enter .. mosaic_blocking_leave),
 * where the thread must leave heap objects alone. A thread that waits (a
 * join, I/O, a lock) outside a blocking region holds up every collection.
 * A thread that exits without freeing its mutator has it detached; free
 * it later from any thread.
 *
 * CALLBACKS. trace, roots and mutator_roots run with the world stopped,
 * on the collecting thread and its GC worker threads (gc_threads);
 * on_move and resize run in a compaction's pause likewise, type_name in
 * mosaic_dump_heap with the world stopped. on_free may run on several threads at
 * once (lazy sweeping happens in allocating threads while others run).
 * The event callback gets COLLECTION_START, MARK_END, HEAP_RESIZE and
 * COLLECTION_END on the collecting thread with the world stopped. The
 * finalizer notifier runs on a collecting thread once the
 * world resumed. None of these may allocate, collect, park, block or run
 * finalizers: the library refuses with MOSAIC_ERR_MISUSE (with one gap:
 * on a thread that is sweeping lazily, an allocation in on_free that the
 * thread's current allocation run can serve is not detected; it is
 * forbidden all the same). Finalizers are not
 * callbacks in that sense: they run in mosaic_run_finalizers (or on the
 * finalizer thread) as ordinary mutator code.
 *
 * WHEN IT COLLECTS. The heap, not a size pool, decides: a collection is
 * due when the bytes allocated since the last one reach the heap target
 * minus the bytes found live then. heap_policy (MOSAIC_HEAP_POLICY) sets
 * the target after each collection: fixed (max_heap), proportional (live
 * x (1 + k)) or adaptive (MemBalancer's square-root rule, the default);
 * formulas at mosaic_config. max_heap stays a hard cap in every policy:
 * an allocation that finds no page after a collection fails with
 * MOSAIC_ERR_OUT_OF_MEMORY.
 *
 * MEMORY. Objects are zeroed, except with MOSAIC_UNINIT (old bytes,
 * pointer-free: for data the caller overwrites entirely). Every object is aligned to 8 bytes, and to
 * 16 when its slot size (mosaic_object_size) is a multiple of 16: with the
 * default size classes that is every object (large objects start a 64 KiB
 * page); Ruby's 40-byte class, or custom sizes that are odd multiples of
 * 8, give 8. mosaic_alloc_aligned gives any power of two up to 65536.
 *
 * MOVING. A compaction moves objects out of sparse pages:
 * mosaic_compact (or mosaic_compact_toward) asks for one, and the
 * compact field of mosaic_config (MOSAIC_COMPACT) makes collections
 * compact on their own (never, by default: auto or always). Every object
 * not pinned may then move, and the collector updates every reference it
 * knows: the fields trace reports, the slots roots and mutator_roots
 * report, root handles, scope slots, weak handles, weak slots and
 * ephemerons. A reference kept anywhere else (an untraced field, a C
 * local outside a scope, a hash table keyed by address) goes stale at the
 * next compaction; the embedder's on_move callback reports each move, so
 * address-keyed tables can follow. Pinned objects never move: those
 * allocated MOSAIC_PINNED (for life), those pinned with mosaic_pin (until
 * as many mosaic_unpin), and, for one collection, those an ambiguous word
 * points into: a word given to mosaic_visit_ambiguous(_range) by roots,
 * mutator_roots or trace (a conservatively scanned object), or a word of a stack scanned conservatively
 * (mosaic_conservative_stack: C locals then keep objects alive and in
 * place without a scope). Large objects never move. mosaic_dump_heap
 * writes the heap's pages and objects as JSON lines, for mosaic-heapviz.
 * verify_compaction (MOSAIC_VERIFY_COMPACTION=1) moves every movable
 * object at every collection and aborts naming any reference left stale:
 * it finds the references trace or roots fail to report.
 *
 * GENERATIONS. With `generational` (MOSAIC_GENERATIONAL=1) most
 * collections are minor: objects that survived a collection are old and
 * keep their marks; a minor collection marks only young objects, from the
 * roots, from the old objects a write barrier logged, and from every old
 * object allocated without MOSAIC_BARRIERED (rescanned each time), and
 * sweeps only pages allocated into since. The barrier contract: for an
 * object allocated MOSAIC_BARRIERED, every store of a reference into it
 * is paired with mosaic_write_barrier(m, obj) (or
 * mosaic_write_barrier_inline), before or after the store, with no
 * allocation, safepoint or blocking region in between. The exemption:
 * stores into an object made before m's next allocation, safepoint or
 * blocking region after allocating it need none (no collection can have
 * made it old) - initialising stores right after mosaic_alloc; one made
 * after another allocation needs the barrier, since a collection inside
 * that allocation may have made the object old. A thread stopped by a
 * signal at any instruction calls the barrier before the store. A bulk copy of
 * references into it (memcpy of an array) needs one barrier, or use
 * mosaic_copy_refs. Objects without the flag need no barrier, so types
 * can adopt barriers one at a time. Logging is per object: a set bit
 * in a side table ("old, not logged yet") sends the first barrier after a
 * collection to the library, which logs the object; every later one
 * returns after one load. Outside generational mode a barrier never
 * calls. In verify mode (and debug builds of the library) every barrier
 * is a call that aborts with a diagnostic if obj is not the start of an
 * object of the heap, and each minor collection is checked by a full walk
 * that names the object a missing barrier lost.
 *
 * SLOT CONTENTS. A traced slot (field, root, scope slot) may hold NULL,
 * the start of an object of the heap, or a value outside the heap, which
 * is ignored (a static object, a small tagged integer). A value inside the
 * heap that is not an object's start (an interior pointer, a pointer with
 * tag bits) keeps the containing object alive today, but verify mode
 * (MOSAIC_VERIFY=1) stops the program with a diagnostic naming the slot,
 * and such a value will not be updated when objects move. So untag into a
 * local, visit the local, and retag:
 *
 *     void *p = (void *)(o->field & ~(uintptr_t)7);
 *     mosaic_visit(tracer, &p);
 *     o->field = (uintptr_t)p | (o->field & 7);
 *
 * Better still, do not visit a tagged integer at all: it is no reference,
 * and a value that happened to fall inside the heap would keep an object
 * alive (and be rewritten if that object moved).
 */

#ifndef MOSAIC_H
#define MOSAIC_H

/* Generated by cbindgen from crates/mosaic-capi; do not edit. Regenerate with MOSAIC_BLESS=1 cargo test -p mosaic-capi --test header. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * `size_classes`: the default table (16-byte granules to 128 B, then four
 * classes per doubling to 8 KiB).
 */
#define MOSAIC_CLASSES_DEFAULT 0

/**
 * `size_classes`: Ruby's five pools: 40, 80, 160, 320, 640 bytes.
 */
#define MOSAIC_CLASSES_RUBY 1

/**
 * `size_classes`: the list `class_sizes[0 .. class_count]`.
 */
#define MOSAIC_CLASSES_CUSTOM 2

/**
 * `heap_policy`: collect when the heap reaches `max_heap`.
 */
#define MOSAIC_HEAP_FIXED 0

/**
 * `heap_policy`: target = max(live × (1 + `heap_proportional_k`), `heap_min`).
 */
#define MOSAIC_HEAP_PROPORTIONAL 1

/**
 * `heap_policy`: MemBalancer's target = live + sqrt(live ×
 * `heap_adaptive_scale` × allocation rate / collection speed).
 */
#define MOSAIC_HEAP_ADAPTIVE 2

/**
 * `page_resource`: free pages in a lock-free queue fed through per-thread
 * release buffers.
 */
#define MOSAIC_PAGES_LOCKFREE 0

/**
 * `page_resource`: free pages in a list behind one mutex (the baseline of
 * the release-phase benchmark).
 */
#define MOSAIC_PAGES_MUTEX 1

/**
 * Most size classes a heap can have (the length of `class_sizes`).
 */
#define MOSAIC_MAX_CLASSES 64

/**
 * The object holds no references and is never traced.
 */
#define MOSAIC_NO_POINTERS 1

/**
 * Call the embedder's `on_free` when the object dies.
 */
#define MOSAIC_NEEDS_CLEANUP 2

/**
 * The object never moves: no compaction relocates it, for life (see
 * MOVING at the top of this header). Use it for memory handed to the OS
 * or to code that keeps raw pointers; `mosaic_pin` pins for a while.
 */
#define MOSAIC_PINNED 4

/**
 * Not cleared: the object's bytes are whatever was there before (an old
 * object's bytes), not zeroes; the caller must overwrite all of them (a
 * byte string, an array of numbers). Implies `MOSAIC_NO_POINTERS`: the
 * collector never reads it. The Boehm collector's `GC_MALLOC_ATOMIC`.
 */
#define MOSAIC_UNINIT 8

/**
 * Scanned conservatively: every aligned word of the object is an
 * ambiguous reference (see `mosaic_visit_ambiguous`), and the `trace`
 * callback is never called for it. What such a word points into, interior
 * pointers included, stays alive and does not move in that collection. A
 * pointer one past the end keeps the object alive only while it falls
 * inside the slot: allocate one byte more if that must hold.
 */
#define MOSAIC_CONSERVATIVE 16

/**
 * The caller promises the write barrier (`mosaic_write_barrier`) for
 * every store of a reference into this object (see GENERATIONS at the
 * top of this header): in generational mode a minor collection then
 * traces it only if a barrier logged it. Without the flag an old object
 * is rescanned by every minor collection. No effect outside
 * generational mode; ignored with `MOSAIC_CONSERVATIVE`.
 */
#define MOSAIC_BARRIERED 32

/**
 * With `MOSAIC_NEEDS_CLEANUP`: what the object references stays alive
 * (and in place) until its `on_free` ran, so `on_free` may read those
 * objects (bdwgc's disclaim procedures with "mark from all"). A chain of
 * such objects takes a collection per link to reclaim; such objects in a
 * cycle longer than a direct self-reference are never reclaimed.
 */
#define MOSAIC_KEEP_REFERENTS 64

/**
 * Why the last call on this thread that reports errors failed
 * (`MOSAIC_OK`: it succeeded).
 */
typedef enum mosaic_error {
  MOSAIC_OK = 0,
  /**
   * The heap is full at its maximum size, even after a collection.
   */
  MOSAIC_ERR_OUT_OF_MEMORY = 1,
  /**
   * The request is larger than any object the heap can hold.
   */
  MOSAIC_ERR_TOO_LARGE = 2,
  /**
   * The pointer is not the start of an object of this heap.
   */
  MOSAIC_ERR_FOREIGN_POINTER = 3,
  /**
   * A NULL or freed handle, unknown flag bits, an out-of-range value (an
   * alignment, an enum value), a weak slot outside the heap's objects, an
   * ephemeron (or ephemeron key) that is not one.
   */
  MOSAIC_ERR_INVALID_ARGUMENT = 4,
  /**
   * A configuration value is out of range.
   */
  MOSAIC_ERR_CONFIG = 5,
  /**
   * The operating system refused to reserve the heap or to start its GC
   * worker threads.
   */
  MOSAIC_ERR_RESERVE = 6,
  /**
   * The object (or weak slot) already has the registration asked for: a
   * second finalizer, a weak slot registered twice. Unregister it first.
   */
  MOSAIC_ERR_ALREADY_REGISTERED = 7,
  /**
   * The call is not allowed in the state the thread is in: allocating,
   * collecting or running finalizers inside a collector callback or a
   * blocking region, leaving a blocking region never entered, starting
   * the finalizer thread twice...
   */
  MOSAIC_ERR_MISUSE = 8,
} mosaic_error;

/**
 * What happened (see `mosaic_set_event_callback` for where each kind is
 * reported).
 */
typedef enum mosaic_event_kind {
  /**
   * A collection begins: the world is stopped. Fields: `number`,
   * `reason`, `heap_bytes`, `allocated_bytes`, `target_bytes` (the target
   * in force).
   */
  MOSAIC_EVENT_COLLECTION_START = 0,
  /**
   * Marking is complete (strong, ephemeron and finalizer closure).
   * Fields: `number`, `reason`, `marked_objects`, `marked_bytes`,
   * `mark_ns`.
   */
  MOSAIC_EVENT_MARK_END = 1,
  /**
   * The collection ends; the world resumes after the callback returns.
   * Fields: `number`, `reason`, `live_bytes`, `heap_bytes`, `pause_ns`,
   * `finalizers_queued`, `target_bytes` (the target set for the next
   * cycle), `allocation_rate`.
   */
  MOSAIC_EVENT_COLLECTION_END = 2,
  /**
   * The heap policy changed the heap target (never more than
   * `max_heap`), at the end of a pause. Fields: `old_bytes`, `new_bytes`.
   */
  MOSAIC_EVENT_HEAP_RESIZE = 3,
} mosaic_event_kind;

/**
 * Why a collection ran.
 */
typedef enum mosaic_gc_reason {
  /**
   * Not about a collection (`MOSAIC_EVENT_HEAP_RESIZE`).
   */
  MOSAIC_REASON_NONE = 0,
  /**
   * The bytes allocated since the last collection reached the heap's
   * allowance (heap target − live bytes after the last collection).
   */
  MOSAIC_REASON_ALLOCATION = 1,
  /**
   * `mosaic_collect`.
   */
  MOSAIC_REASON_EXPLICIT = 2,
  /**
   * The heap reached `max_heap`: an allocation could not get a page.
   */
  MOSAIC_REASON_HEAP_LIMIT = 3,
  /**
   * Stress mode (`stress`, `MOSAIC_STRESS`) collected.
   */
  MOSAIC_REASON_STRESS = 4,
  /**
   * The embedder asked for a minor collection (`mosaic_collect_young`).
   */
  MOSAIC_REASON_YOUNG = 5,
} mosaic_gc_reason;

/**
 * A garbage-collected heap (opaque).
 */
typedef struct mosaic_heap mosaic_heap;

/**
 * One thread's handle on a heap (opaque).
 */
typedef struct mosaic_mutator mosaic_mutator;

/**
 * A handle keeping one object alive (opaque).
 */
typedef struct mosaic_root mosaic_root;

/**
 * The collector's side of tracing (opaque); pass it to `mosaic_visit`,
 * `mosaic_visit_ambiguous`, `mosaic_visit_ambiguous_range` and
 * `mosaic_defer_ambiguous_range`.
 */
typedef struct mosaic_tracer mosaic_tracer;

/**
 * A weak handle: holds an object without keeping it alive (opaque).
 */
typedef struct mosaic_weak mosaic_weak;

/**
 * When collections compact: one of the `MOSAIC_COMPACT_NEVER`,
 * `MOSAIC_COMPACT_AUTO` or `MOSAIC_COMPACT_ALWAYS` values (`compact` in
 * `mosaic_config`).
 */
typedef uint32_t mosaic_compact_policy;

/**
 * Which pages a compaction fills and which it empties: one of the
 * `MOSAIC_COMPACT_PINNED_FIRST` or `MOSAIC_COMPACT_ADDRESS` values
 * (`compact_toward` in `mosaic_config`, `mosaic_compact_toward`).
 */
typedef uint32_t mosaic_compact_order;

/**
 * Heap configuration; fill with `mosaic_config_default` or
 * `mosaic_config_from_env`, then adjust, and pass to `mosaic_heap_new`
 * (NULL there means `mosaic_config_from_env`). Every field, the
 * environment variable that overrides it, its default and meaning:
 *
 * | field | variable | default | meaning |
 * |---|---|---|---|
 * | `max_heap` | `MOSAIC_MAX_HEAP` | 4 GiB | hard cap: small pages plus large objects never exceed it; the fixed policy's target (64 KiB to 1 TiB; the variable takes `K`/`M`/`G`/`T` suffixes: `512M`) |
 * | `heap_policy`, `heap_proportional_k`, `heap_adaptive_scale` | `MOSAIC_HEAP_POLICY` | `MOSAIC_HEAP_ADAPTIVE`, scale = 256 MiB, k = 1 | when to collect: the next collection is due when the bytes allocated since the last one reach target − live. `MOSAIC_HEAP_FIXED`: target = `max_heap`. `MOSAIC_HEAP_PROPORTIONAL`: target = max(live × (1 + k), `heap_min`), k from 0.05 to 100 (k = 1 is Go's GOGC=100). `MOSAIC_HEAP_ADAPTIVE` (MemBalancer): target = max(live + sqrt(live × scale × g / s), `heap_min`), g the allocation rate and s the collection speed measured online, scale from 1 KiB to 1 TiB. The variable reads `fixed`, `proportional`, `proportional:0.5`, `adaptive` or `adaptive:64M` |
 * | `heap_min` | `MOSAIC_HEAP_MIN` | 1 MiB | the target never goes below this; it is the target before the first collection (64 KiB to `max_heap`; `MOSAIC_MAX_HEAP` below the default lowers it with it) |
 * | `size_classes`, `class_count`, `class_sizes` | `MOSAIC_SIZE_CLASSES` | `MOSAIC_CLASSES_DEFAULT` | slot sizes of the size pools: `mosaic` (16-byte granules to 128 B, then four per doubling to 8 KiB), `ruby` (40, 80, 160, 320, 640) or a comma list (`16,48,96`); see below |
 * | `initial_slots` | `MOSAIC_INITIAL_SLOTS` | 10000 | slots each pool may take as fresh pages before it must sweep all its pages first (at least one page, at most 4 MiB per pool); pools never trigger collections |
 * | `growth_factor` | `MOSAIC_GROWTH_FACTOR` | 1.8 | a churning pool short of free slots multiplies its page budget by this (1 to 16) |
 * | `growth_max` | `MOSAIC_GROWTH_MAX` | 64 MiB | most bytes one growth step may add to a pool (0: unbounded) |
 * | `free_min_ratio` | `MOSAIC_FREE_MIN` | 0.20 | below this free-slot ratio after sweeping, a churning pool grows |
 * | `free_goal_ratio` | `MOSAIC_FREE_GOAL` | 0.40 | free ratio a shrinking pool aims for |
 * | `free_max_ratio` | `MOSAIC_FREE_MAX` | 0.65 | above this free ratio a pool's budget shrinks and spare pages are decommitted (0 < min < goal < max < 1) |
 * | `stable_ratio` | `MOSAIC_STABLE_RATIO` | 0.10 | a pool that handed out fewer than this fraction of its slots since the last collection is stable and may run full without growing (0 to 1) |
 * | `lazy_sweep` | `MOSAIC_LAZY_SWEEP` | true | sweep pages on demand after a pause, in allocating threads (false: sweep everything inside the pause) |
 * | `background_sweep` | `MOSAIC_BACKGROUND_SWEEP` | true | between pauses, while fewer mutators run than there are CPUs, a GC worker sweeps pages ahead of the allocating threads and clears their free slots (needs `gc_threads` other than 1) |
 * | `sweep_step_pages` | `MOSAIC_SWEEP_STEP` | 4 | pages an allocation may sweep looking for space before taking a fresh page (at least 1) |
 * | `verify` | `MOSAIC_VERIFY` | false | after each marking, walk the heap again and abort with a diagnostic on the first bad reference (roots and `mutator_roots` then run twice per collection); the sweep fills freed small-object slots with `0xA5` bytes, so a missed root reads garbage at once |
 * | `stress` | `MOSAIC_STRESS` | 0 | collect every N allocations (0: off) |
 * | `gc_threads` | `MOSAIC_GC_THREADS` | 0 | GC workers, the collecting thread included (0: one per available core; 1: the collecting thread alone) |
 * | `parallel_min_live` | `MOSAIC_PARALLEL_MIN_LIVE` | 4 MiB | a collection runs on every GC worker only if the previous one found this many bytes live (or the heap committed 8 times as much, or the previous marking took 0.5 ms or more on one thread); smaller ones run on the collecting thread alone (0: always every worker) |
 * | `parallel_help_us` | `MOSAIC_PARALLEL_HELP_US` | 100 | a collection run on the collecting thread alone hands the rest of its marking to every GC worker after this many microseconds, if it has enough work to share (0: as soon as it has) |
 * | `headroom_max` | `MOSAIC_HEADROOM_MAX` | 3.0 | the adaptive policy's headroom is at most this many times the live bytes, plus one such share (at most 4 MiB) per further thread running in parallel between collections, at most the CPUs (0: no cap) |
 * | `ephemeron_header` | (none) | 0 | bytes of embedder header (a multiple of 8, at most 512) before every ephemeron's key and value words: `trace` sees ephemerons and visits the header, never the key and value |
 * | `page_resource` | `MOSAIC_PAGE_RESOURCE` | `MOSAIC_PAGES_LOCKFREE` | how free pages are kept: `MOSAIC_PAGES_LOCKFREE` (`lockfree`) or `MOSAIC_PAGES_MUTEX` (`mutex`, a free list behind one lock, for comparison) |
 * | (none) | `MOSAIC_TRACE` | unset | a path: when set at heap creation, the heap writes a Chrome trace-event JSON timeline of its pauses there when it is destroyed |
 * | `stall_warning_ms` | `MOSAIC_STALL_WARNING_MS` | 1000 | a collection that has waited this long for mutators to reach a safepoint prints once which mutators and threads it waits for (0: never) |
 * | `compact` | `MOSAIC_COMPACT` | `MOSAIC_COMPACT_NEVER` | when collections compact (move objects out of sparse pages): `MOSAIC_COMPACT_NEVER` (`never`: only `mosaic_compact`), `MOSAIC_COMPACT_AUTO` (`auto`: the pools whose free slots in partly used pages reach their live slots) or `MOSAIC_COMPACT_ALWAYS` (`always`: every pool at every collection). See MOVING at the top of this header |
 * | `compact_toward` | `MOSAIC_COMPACT_TOWARD` | `MOSAIC_COMPACT_PINNED_FIRST` | which pages a compaction fills: `MOSAIC_COMPACT_PINNED_FIRST` (`pinned`: the pages with the most pinned objects first) or `MOSAIC_COMPACT_ADDRESS` (`address`: the lowest addresses first, for comparison) |
 * | `generational` | `MOSAIC_GENERATIONAL` | false | generational collection with sticky mark bits: most collections are minor (they mark from the roots, the objects `mosaic_write_barrier` logged and every old object allocated without `MOSAIC_BARRIERED`, and sweep only pages allocated into since the last collection); full ones when the heap target nears or a minor collection pays too little. See GENERATIONS at the top of this header |
 * | `dirty_pages` | `MOSAIC_DIRTY_PAGES` | false | with `generational`: a minor collection rescans only the unbarriered old objects on OS pages written since the last collection (Linux's soft-dirty bits; without them, a warning and everything is rescanned) |
 * | `verify_compaction` | `MOSAIC_VERIFY_COMPACTION` | false | every collection moves every movable object to fresh pages, then checks that no reference the collector knows still holds an old address (the library aborts with a diagnostic naming the stale slot): finds references `trace` or `roots` fails to report |
 *
 * Booleans read `1`/`0`, `true`/`false`, `yes`/`no` or `on`/`off`. A bad
 * value makes `mosaic_config_from_env` fail with `MOSAIC_ERR_CONFIG`
 * naming the variable. Any other `MOSAIC_*` variable in the environment is
 * reported once on stderr with the closest known name (a misspelling such
 * as `MOSAIC_STRES` is not silently ignored), except `MOSAIC_BLESS`,
 * `MOSAIC_LIB_DIR`, `MOSAIC_MODEL_CASES` and `MOSAIC_TEST_STALL_CHILD`,
 * which Mosaic's own tests and tools read (the library does not).
 *
 * The size-class table is `size_classes`: `MOSAIC_CLASSES_DEFAULT`,
 * `MOSAIC_CLASSES_RUBY`, or `MOSAIC_CLASSES_CUSTOM` for the list in
 * `class_sizes[0 .. class_count]`: 1 to `MOSAIC_MAX_CLASSES` ascending
 * slot sizes, multiples of 8 from 16 to 16384 bytes (a bad list makes
 * `mosaic_heap_new` fail with `MOSAIC_ERR_CONFIG`). The filling functions
 * also write the table of a preset into `class_sizes` and `class_count`;
 * those two fields are read only when `size_classes` is
 * `MOSAIC_CLASSES_CUSTOM`.
 */
typedef struct mosaic_config {
  size_t max_heap;
  uint32_t heap_policy;
  double heap_proportional_k;
  size_t heap_adaptive_scale;
  size_t heap_min;
  uint32_t size_classes;
  size_t class_count;
  uint32_t class_sizes[MOSAIC_MAX_CLASSES];
  size_t initial_slots;
  double growth_factor;
  size_t growth_max;
  double free_min_ratio;
  double free_goal_ratio;
  double free_max_ratio;
  double stable_ratio;
  bool lazy_sweep;
  bool background_sweep;
  size_t sweep_step_pages;
  bool verify;
  uint64_t stress;
  /**
   * GC worker threads, the collecting thread included (0: one per
   * available core).
   */
  size_t gc_threads;
  /**
   * `MOSAIC_PAGES_LOCKFREE` or `MOSAIC_PAGES_MUTEX`.
   */
  uint32_t page_resource;
  /**
   * Milliseconds a collection waits for mutators before it prints which
   * ones it waits for (0: never).
   */
  uint64_t stall_warning_ms;
  /**
   * When collections compact: `MOSAIC_COMPACT_NEVER`,
   * `MOSAIC_COMPACT_AUTO` or `MOSAIC_COMPACT_ALWAYS`.
   */
  mosaic_compact_policy compact;
  /**
   * Which pages compactions fill: `MOSAIC_COMPACT_PINNED_FIRST` or
   * `MOSAIC_COMPACT_ADDRESS`.
   */
  mosaic_compact_order compact_toward;
  /**
   * Every collection moves every movable object and checks that no
   * known reference still holds an old address.
   */
  bool verify_compaction;
  /**
   * Live bytes (found by the previous collection) from which a
   * collection runs on every GC worker; smaller ones run on the
   * collecting thread alone (0: always every worker).
   */
  size_t parallel_min_live;
  /**
   * Bytes of embedder header (a multiple of 8, at most 512) at the start
   * of every ephemeron, before its key and value words; `trace` is
   * called on ephemerons and visits the header, never the key and value
   * (see `mosaic_ephemeron_new`).
   */
  size_t ephemeron_header;
  /**
   * The adaptive policy's headroom is at most this many times the live
   * bytes, plus one such share (at most 4 MiB) for each further thread
   * that ran in parallel between collections, at most the CPUs (0: no
   * cap).
   */
  double headroom_max;
  /**
   * Generational collection with sticky mark bits: most collections
   * are minor. Objects allocated with `MOSAIC_BARRIERED` need
   * `mosaic_write_barrier` on every store of a reference into them;
   * others are rescanned by every minor collection.
   */
  bool generational;
  /**
   * With `generational`: a minor collection rescans only the
   * unbarriered old objects on OS pages written since the last
   * collection (Linux's soft-dirty bits).
   */
  bool dirty_pages;
  /**
   * A collection run on the collecting thread alone (see
   * `parallel_min_live`) hands the rest of its marking to every GC
   * worker after this many microseconds, if it has enough work to
   * share (0: as soon as it has).
   */
  uint64_t parallel_help_us;
} mosaic_config;

/**
 * One GC event: `kind` says which fields are set (see
 * `mosaic_event_kind`); the others are 0. Times are in nanoseconds, sizes
 * in bytes. Valid only during the callback.
 */
typedef struct mosaic_event {
  enum mosaic_event_kind kind;
  enum mosaic_gc_reason reason;
  /**
   * The collection's number: 1 for the heap's first.
   */
  uint64_t number;
  /**
   * Objects marked: the live objects, plus those kept for finalizers.
   */
  uint64_t marked_objects;
  /**
   * Their bytes (slot sizes; a large object's whole pages).
   */
  uint64_t marked_bytes;
  /**
   * Bytes found live (as `marked_bytes`).
   */
  uint64_t live_bytes;
  /**
   * Heap memory committed (pages in use or cached).
   */
  size_t heap_bytes;
  /**
   * The size target before and after a `MOSAIC_EVENT_HEAP_RESIZE`.
   */
  size_t old_bytes;
  size_t new_bytes;
  /**
   * The whole pause, start to end.
   */
  uint64_t pause_ns;
  /**
   * Marking time.
   */
  uint64_t mark_ns;
  /**
   * Finalizers this collection queued.
   */
  size_t finalizers_queued;
  /**
   * Bytes allocated since the previous collection (COLLECTION_START).
   */
  uint64_t allocated_bytes;
  /**
   * The heap target: in force (COLLECTION_START) or set for the next
   * cycle (COLLECTION_END).
   */
  size_t target_bytes;
  /**
   * Allocation rate the policy measured, bytes per second of mutator
   * time (COLLECTION_END).
   */
  double allocation_rate;
  /**
   * Time from the stop request until every other mutator reached a
   * safepoint (COLLECTION_START; it is part of `pause_ns`).
   */
  uint64_t time_to_safepoint_ns;
  /**
   * A minor collection (MARK_END, generational mode): the marked counts
   * are of the young objects it kept.
   */
  bool minor;
} mosaic_event;

/**
 * Receives GC events (see `mosaic_set_event_callback`).
 */
typedef void (*mosaic_event_fn)(void *ctx, const struct mosaic_event *ev);

/**
 * One allocation buffer: the current run of a size class. Bump
 * `cursor` by `slot_size` while the result stays `<= limit`; the other
 * words belong to the library.
 */
typedef struct mosaic_alloc_buffer {
  size_t cursor;
  size_t limit;
  size_t slot_size;
  size_t private_[3];
} mosaic_alloc_buffer;

/**
 * What `mosaic_alloc_inline` reads: `buffers[class_of[(size + 7) >> 3]]`
 * for a size whose index is below `class_of_len` (larger sizes are large
 * objects); `*safepoint_requested` is non-zero while another thread waits
 * for this one to reach a safepoint. What `mosaic_write_barrier_inline`
 * reads: for an object `obj` with `g = (obj - log_base) >> 3` and
 * `obj - log_base < log_len`, bit `g % 64` of `log_bits[g / 64]` set means
 * "old and not yet logged" (call `mosaic_write_barrier`); with
 * `barrier_checks` (verify mode, debug builds) every barrier is a call.
 * Valid while the mutator lives.
 */
typedef struct mosaic_fast_path {
  struct mosaic_alloc_buffer *buffers;
  const uint8_t *class_of;
  size_t class_of_len;
  const uint8_t *safepoint_requested;
  size_t log_base;
  size_t log_len;
  const uint64_t *log_bits;
  bool barrier_checks;
} mosaic_fast_path;

/**
 * A finalizer: runs once for `obj`, with `data` as registered, on a thread
 * running finalizers, with that thread's mutator `m` (see
 * `mosaic_register_finalizer`). `obj` is pinned until it returns, so it
 * stays valid even if the finalizer allocates and a compaction runs.
 */
typedef void (*mosaic_finalizer_fn)(struct mosaic_mutator *m, void *obj, void *data);

/**
 * The order in which unreachable finalizable objects are finalized: one
 * of the `MOSAIC_FINALIZE_*` values.
 */
typedef uint32_t mosaic_finalizer_order;

/**
 * Called when a collection has queued finalizers (see
 * `mosaic_set_finalizer_notifier`).
 */
typedef void (*mosaic_notify_fn)(void *ctx);

/**
 * Reports the reference fields of `obj`: call `mosaic_visit(tracer, &field)`
 * for each one. Runs during a collection (see `mosaic_embedder`).
 */
typedef void (*mosaic_trace_fn)(void *ctx, void *obj, struct mosaic_tracer *tracer);

/**
 * Reports the runtime's root slots: `mosaic_visit(tracer, &slot)` for each.
 * Runs during a collection (see `mosaic_embedder`).
 */
typedef void (*mosaic_roots_fn)(void *ctx, struct mosaic_tracer *tracer);

/**
 * Called for each dead object allocated with `MOSAIC_NEEDS_CLEANUP`, when
 * its page is swept (see `mosaic_embedder`).
 */
typedef void (*mosaic_free_fn)(void *ctx, void *obj);

/**
 * Reports the root slots of one mutator `m` (its interpreter stack, its
 * saved registers): `mosaic_visit(tracer, &slot)` for each. `mutator_data`
 * is what `mosaic_mutator_set_data` set for `m` (NULL if nothing). Runs
 * during a collection, for each mutator (see `mosaic_embedder`).
 */
typedef void (*mosaic_mutator_roots_fn)(void *ctx, struct mosaic_mutator *m, void *mutator_data, struct mosaic_tracer *tracer);

/**
 * Called for each object a compaction moved, once its bytes are at `to`
 * (see `mosaic_embedder`).
 */
typedef void (*mosaic_move_fn)(void *ctx, void *from, void *to, size_t old_size, size_t new_size);

/**
 * The size `obj` (now in a slot of `size` bytes) would best have, or 0 for
 * no preference (see `mosaic_embedder`).
 */
typedef size_t (*mosaic_resize_fn)(void *ctx, void *obj, size_t size);

/**
 * A short static name of `obj`'s type for heap dumps, or NULL (see
 * `mosaic_embedder`).
 */
typedef const char *(*mosaic_type_name_fn)(void *ctx, void *obj);

/**
 * How the collector finds references. `trace` is required; `roots`,
 * `on_free`, `mutator_roots`, `on_move`, `resize` and `type_name` may be
 * NULL. `ctx` is passed to every callback.
 *
 * `trace`, `roots` and `mutator_roots` run while every other mutator is
 * stopped (parked at a safepoint or inside a blocking region), on the
 * collecting thread (the one whose allocation or `mosaic_collect` started
 * the collection) and, with several GC workers (`gc_threads`, one per
 * core by default), on the heap's GC threads too: `trace` may run on
 * several threads at once for different objects, and `roots` and the
 * `mutator_roots` calls of different mutators on different threads at
 * the same time. They must be thread-safe. They must not allocate or call any mosaic function
 * other than `mosaic_visit`: `mosaic_alloc` returns NULL with
 * `MOSAIC_ERR_MISUSE` there, `mosaic_collect` and `mosaic_safepoint`
 * refuse with it, and the collection completes.
 *
 * `roots` runs once per collection, and `mutator_roots` once per
 * collection for each mutator of the heap that has not been freed, the
 * collecting one included, with that mutator's handle and its
 * `mosaic_mutator_set_data` pointer (both run twice with `verify`, whose
 * walk scans the roots again). `mutator_roots` is the last field, so
 * initialisers written before it existed leave it NULL; a program built
 * against an older mosaic.h must be recompiled, though. The mutator
 * is stopped: parked, in a blocking region (whose code must then leave
 * the slots it reports alone), or its thread has exited. Use the handle
 * to tell mutators apart; do not call mosaic functions with it there.
 *
 * `on_free` runs on the thread that sweeps the dead object. With lazy
 * sweeping (the default) that is mostly an allocating mutator's thread,
 * inside `mosaic_alloc` (or `mosaic_finish_sweep`), while other mutators
 * keep running, so several threads may run `on_free` at the same time for
 * different objects; the collecting thread also sweeps inside the pause
 * (large objects; the thread that starts a collection first sweeps what
 * is left unswept, with the world still running, and the pause sweeps
 * what other threads' sweeps still held then). With
 * eager sweeping (`lazy_sweep = false`) it runs inside the pause. When the
 * heap is torn down it runs on the thread that frees the last handle
 * (`mosaic_heap_free` or `mosaic_mutator_free`). It must be thread-safe,
 * must not allocate or call mosaic functions, and must not touch other
 * heap objects: they may be dead too (except, for an object allocated
 * `MOSAIC_KEEP_REFERENTS`, those its fields reference: they stay alive
 * and in place until its `on_free` ran).
 *
 * `on_move`, `resize` and `type_name` serve compaction and heap dumps;
 * they were added last, after `mutator_roots`, so initialisers written
 * before them leave them NULL (a program built against an older mosaic.h
 * must still be recompiled). They follow the rules of `trace`: no
 * allocation, no mosaic call (`mosaic_alloc` and the others refuse with
 * `MOSAIC_ERR_MISUSE`), thread-safe.
 *
 * `on_move(ctx, from, to, old_size, new_size)` runs for each object a
 * compaction moved (`mosaic_compact`, or `compact` in `mosaic_config`),
 * in the pause, on any GC worker, once the object's bytes are at `to`
 * (the first min(`old_size`, `new_size`) bytes copied, the rest of a
 * bigger slot zeroed). The sizes are slot sizes; they differ when
 * `resize` asked for another size. Other references may still hold
 * `from` then: read no other object's fields. Update address-keyed
 * tables here (an identity hash, a symbol table).
 *
 * `resize(ctx, obj, size)` is asked, during a compaction's pause, for each
 * object that may move: `size` is its slot size now; return the size it
 * would best have (a string or array that grew or shrank in place), or 0
 * for no preference. An object given another size class moves into that
 * class's pool (what fits is copied) and `on_move` gets both sizes. A
 * size no class holds is ignored.
 *
 * `type_name(ctx, obj)` names `obj`'s type in heap dumps
 * (`mosaic_dump_heap`), with the world stopped, on the dumping thread:
 * return a NUL-terminated UTF-8 string that stays valid (a string
 * literal), or NULL for none. A string that is not UTF-8 counts as NULL.
 *
 * Callbacks must return normally: leaving one by unwinding (`longjmp`, a
 * C++ exception) is undefined behaviour. A Rust panic inside the library
 * cannot cross into C either: if one happens while C called in (verify
 * mode's diagnostic on a corrupt heap, for instance), the library prints
 * its message and aborts the process.
 */
typedef struct mosaic_embedder {
  mosaic_trace_fn trace;
  mosaic_roots_fn roots;
  mosaic_free_fn on_free;
  void *ctx;
  mosaic_mutator_roots_fn mutator_roots;
  mosaic_move_fn on_move;
  mosaic_resize_fn resize;
  mosaic_type_name_fn type_name;
} mosaic_embedder;

/**
 * When a weak reference is cleared: one of the `MOSAIC_WEAK_*` values.
 */
typedef uint32_t mosaic_weak_kind;

/**
 * Heap-wide statistics (times in nanoseconds).
 */
typedef struct mosaic_stats {
  uint64_t collections;
  uint64_t mark_time_ns;
  uint64_t sweep_time_ns;
  uint64_t pause_count;
  uint64_t pause_p50_ns;
  uint64_t pause_p99_ns;
  uint64_t pause_max_ns;
  uint64_t longest_sweep_step_ns;
  uint64_t last_marked;
  uint64_t live_objects;
  size_t pool_count;
  size_t pool_pages;
  size_t large_objects;
  size_t large_pages;
  size_t committed_bytes;
  size_t max_heap;
  size_t rss_bytes;
  /**
   * The heap target now (`MOSAIC_HEAP_*` policy): the next collection
   * is due when `allocated_since_gc` reaches the target minus the bytes
   * live after the last collection.
   */
  size_t heap_target;
  uint64_t allocated_since_gc;
  /**
   * Bytes found live by the last collection (slot sizes, large objects'
   * pages).
   */
  uint64_t last_live_bytes;
  /**
   * Allocation rate and collection speed the policy measured at the
   * last collection (bytes per second, smoothed; 0 before one).
   */
  double allocation_rate;
  double collection_speed;
  /**
   * Time from a collection's stop request until every mutator reached
   * a safepoint (part of each pause): median and maximum.
   */
  uint64_t safepoint_p50_ns;
  uint64_t safepoint_max_ns;
  /**
   * Compactions so far (`mosaic_compact`, or `compact` in
   * `mosaic_config`).
   */
  uint64_t compactions;
  /**
   * What the last compaction did (0 before one): objects moved, their
   * bytes (old slot sizes), and pages it left with no live object.
   */
  uint64_t last_compaction_objects_moved;
  uint64_t last_compaction_bytes_moved;
  uint64_t last_compaction_pages_emptied;
  /**
   * Objects moved by every compaction so far.
   */
  uint64_t total_objects_moved;
  /**
   * Objects pinned with `mosaic_pin` now (not counting `MOSAIC_PINNED`
   * allocations).
   */
  size_t pinned_objects;
  /**
   * Generational mode: minor and full collections (both counted in
   * `collections`), the minor pauses' median, p99 and maximum, objects
   * traced from the remembered set and unbarriered old objects
   * rescanned, over all minor collections.
   */
  uint64_t minor_collections;
  uint64_t full_collections;
  uint64_t minor_pause_p50_ns;
  uint64_t minor_pause_p99_ns;
  uint64_t minor_pause_max_ns;
  uint64_t remembered_objects;
  uint64_t rescanned_objects;
  /**
   * Mutators the heap policy counted as running at the last collection
   * (allocating threads' CPU time over wall time, smoothed; 0 before
   * one): each one's share of allocation grows the heap target.
   */
  double running_mutators;
  /**
   * Pages background sweeping swept or cleared between pauses
   * (`background_sweep` in `mosaic_config`), and the bytes it cleared
   * ahead of the allocator.
   */
  uint64_t background_pages;
  uint64_t background_cleared_bytes;
} mosaic_stats;

/**
 * Statistics of one size pool.
 */
typedef struct mosaic_pool_stats {
  size_t slot_size;
  size_t pages;
  size_t unswept_pages;
  size_t budget_pages;
  uint64_t live_slots;
  uint64_t free_slots;
  uint64_t allocated_total;
  uint64_t freed_total;
  uint64_t longest_sweep_step_ns;
} mosaic_pool_stats;

/**
 * `compact`: only `mosaic_compact` and `mosaic_compact_toward` compact
 * (the default: moving objects requires every reference to be reported
 * through `trace`, `roots` and `mutator_roots`).
 */
#define MOSAIC_COMPACT_NEVER 0

/**
 * `compact`: each collection also compacts the size pools whose free
 * slots in partly used pages reach their live slots (and two pages'
 * worth).
 */
#define MOSAIC_COMPACT_AUTO 1

/**
 * `compact`: every collection compacts every size pool.
 */
#define MOSAIC_COMPACT_ALWAYS 2

/**
 * The pages with the most pinned objects are filled first and those with
 * the fewest emptied, so more pages end empty (the default).
 */
#define MOSAIC_COMPACT_PINNED_FIRST 0

/**
 * The lowest addresses are filled first and the highest emptied (for
 * comparison).
 */
#define MOSAIC_COMPACT_ADDRESS 1

/**
 * If an unreachable finalizable object A reaches another one B, A is
 * finalized first and B only in a later collection, once A is gone (B
 * stays intact for A's finalizer). Direct self-references are ignored;
 * objects in a longer cycle of ordered finalizable objects are never
 * finalized (they leak, as with Boehm's `GC_register_finalizer`).
 */
#define MOSAIC_FINALIZE_ORDERED 0

/**
 * Every unreachable finalizable object is finalized as soon as it is
 * unreachable, cycles included, in no particular order: a finalizer may
 * see objects whose own finalizer already ran.
 */
#define MOSAIC_FINALIZE_UNORDERED 1

/**
 * Cleared as soon as the target is found unreachable, before its finalizer
 * (if any) runs: a finalizer never sees its object through a short weak
 * reference (Java's `WeakReference`).
 */
#define MOSAIC_WEAK_SHORT 0

/**
 * Cleared only when the target is reclaimed: an object kept alive for its
 * finalizer keeps its long weak references until it dies for good, in a
 * later collection (Boehm's `GC_register_long_link`).
 */
#define MOSAIC_WEAK_LONG 1

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * Fills `out` with the defaults. Returns `MOSAIC_ERR_INVALID_ARGUMENT` if
 * `out` is NULL.
 *
 * # Safety
 * `out` must be NULL or point to writable memory for a `mosaic_config`.
 */
enum mosaic_error mosaic_config_default(struct mosaic_config *out);

/**
 * Fills `out` with the defaults overridden by `MOSAIC_*` environment
 * variables. On a bad variable, returns `MOSAIC_ERR_CONFIG` (the message
 * names it) and leaves `out` with the defaults.
 *
 * # Safety
 * As `mosaic_config_default`.
 */
enum mosaic_error mosaic_config_from_env(struct mosaic_config *out);

/**
 * Visits one reference slot: `slot` is the address of a field (or root)
 * holding NULL, an object of the heap, or a pointer outside the heap.
 * Called once per edge, it reports no errors and leaves the last error as
 * it was (NULL arguments are ignored).
 *
 * # Safety
 * `tracer` must be the tracer passed to the running callback and `slot`
 * NULL or a valid, writable pointer-sized location.
 */
void mosaic_visit(struct mosaic_tracer *tracer, void **slot);

/**
 * Visits one *ambiguous* word: a value that may or may not be a reference
 * (a word of a C stack, a saved register, a JIT frame, a conservatively
 * scanned buffer). If it points anywhere inside an object of the heap
 * (interior pointers included), that object is kept alive and pinned for
 * this collection: a compaction does not move it, since the word cannot
 * be updated. Any other value is ignored. From `roots` or
 * `mutator_roots` the word is a root; from `trace` it is a field of the
 * object being traced that is never updated (an object whose words are all
 * visited this way is scanned conservatively). Like `mosaic_visit`, it
 * reports no errors and leaves the last error as it was (a NULL tracer is
 * ignored).
 *
 * # Safety
 * `tracer` must be NULL or the tracer passed to the running callback.
 */
void mosaic_visit_ambiguous(struct mosaic_tracer *tracer, size_t word);

/**
 * `mosaic_visit_ambiguous` on every pointer-aligned word from `start` up
 * to `end` (exclusive): a buffer, or a stack segment your runtime manages.
 * `start` is rounded up and `end` down to a multiple of the word size; an
 * empty or reversed range, or a NULL argument, is ignored. Reports no
 * errors, like `mosaic_visit`. Call it from `roots`, `mutator_roots` or
 * `trace` (a conservatively scanned object's words).
 *
 * # Safety
 * `tracer` must be NULL or the tracer passed to the running callback, and
 * `start .. end` readable memory that nothing writes during the call.
 */
void mosaic_visit_ambiguous_range(struct mosaic_tracer *tracer, const void *start, const void *end);

/**
 * `mosaic_visit_ambiguous_range` for memory that stays readable and
 * unchanged until the collection's marking ends (your program's data,
 * a table of constants, a stopped thread's stack segment): the collector
 * may queue the range and scan it later, in pieces, on any GC worker, so
 * that a large root range is shared out among the workers instead of
 * holding one while the others wait. Bounds, errors and where to call it
 * as for `mosaic_visit_ambiguous_range`. Not for memory the callback is
 * about to change or free (a buffer on its own stack).
 *
 * # Safety
 * `tracer` must be NULL or the tracer passed to the running callback, and
 * `start .. end` readable memory that nothing writes, frees or unmaps until
 * the collection's marking has ended.
 */
void mosaic_defer_ambiguous_range(struct mosaic_tracer *tracer, const void *start, const void *end);

/**
 * The error code of the last call on this thread that reports errors:
 * `MOSAIC_OK` if it succeeded.
 *
 * Every function of this API that can fail reports: on failure (a NULL or
 * freed handle included) it sets the code and a message naming the
 * function; on success it resets the code to `MOSAIC_OK`. The exceptions:
 * `mosaic_last_error` and `mosaic_last_error_message` change nothing;
 * `mosaic_visit`, `mosaic_visit_ambiguous` and
 * `mosaic_visit_ambiguous_range` report nothing (they run once per edge
 * or word and must stay cheap); the `*_free` functions ignore NULL like `free()` and leave the
 * last error as it was (freeing a live handle resets it, freeing one twice
 * is an error where it can be detected).
 */
enum mosaic_error mosaic_last_error(void);

/**
 * A message describing the last error on this thread, starting with the
 * name of the function that failed; "" if the last call succeeded. The
 * string stays valid until the next failing call on this thread.
 */
const char *mosaic_last_error_message(void);

/**
 * Sets the function called with every GC event (`f(ctx, ev)`; NULL `f`
 * removes it). `ev` is valid during the call only.
 *
 * Where each kind is reported: `MOSAIC_EVENT_COLLECTION_START`,
 * `MOSAIC_EVENT_MARK_END` and `MOSAIC_EVENT_COLLECTION_END`, in that order
 * for each collection, inside the pause on the collecting thread, every
 * other mutator stopped. `MOSAIC_EVENT_HEAP_RESIZE` when the heap policy
 * changes the heap target: inside the pause, just before
 * `COLLECTION_END`.
 *
 * The callback is a collector callback: it must return normally, must not
 * allocate, collect, run finalizers or block (refused with
 * `MOSAIC_ERR_MISUSE`), and must be thread-safe. It may read
 * `mosaic_heap_stats`. Any thread. Errors: a NULL or freed heap.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `f` NULL or a function
 * safe to call with `ctx` from any mutator thread.
 */
enum mosaic_error mosaic_set_event_callback(struct mosaic_heap *heap, mosaic_event_fn f, void *ctx);

/**
 * The mutator's fast-path view for `mosaic_alloc_inline` and
 * `mosaic_safepoint_inline` (fetch it once per thread and keep it beside
 * the mutator). NULL for a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator used only by the calling thread.
 */
const struct mosaic_fast_path *mosaic_mutator_fast_path(struct mosaic_mutator *m);

/**
 * Registers a finalizer for `obj`: when `obj` becomes unreachable it is
 * kept alive, with everything it references, until `f(m, obj, data)` has
 * run once; a later collection reclaims it, unless `f` stored it somewhere
 * reachable again. `order` is `MOSAIC_FINALIZE_ORDERED` or
 * `MOSAIC_FINALIZE_UNORDERED`.
 *
 * `f` never runs inside a collection or an allocation: collections queue
 * the finalizers of objects they find unreachable, and they run in
 * `mosaic_run_finalizers` on the thread that calls it (or on the finalizer
 * thread, `mosaic_start_finalizer_thread`). `m` is the mutator of that
 * thread, valid during the call: `f` may allocate, collect and use heap
 * objects through it, but must not free it. A finalizer still registered
 * or queued when the heap goes away never runs (`on_free` still does).
 *
 * `data` is stored as given: it is neither traced nor updated when
 * objects move. A heap object the finalizer needs should be reached from
 * `obj` (traced, and kept alive with it); if `data` points to one, that
 * object must stay reachable by other paths and be pinned
 * (`mosaic_pin`) until the finalizer has run. A registration allocates
 * nothing and takes 16 bytes.
 *
 * Call on the mutator's thread. Errors: `MOSAIC_ERR_FOREIGN_POINTER` if
 * `obj` is not an object of the heap; `MOSAIC_ERR_ALREADY_REGISTERED` if it
 * has a finalizer already (registered, not yet queued);
 * `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `f`, an unknown `order`, a NULL
 * or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread; `f` a valid
 * function, safe to call on any thread running finalizers with `data`.
 */
enum mosaic_error mosaic_register_finalizer(struct mosaic_mutator *m, void *obj, mosaic_finalizer_fn f, void *data, mosaic_finalizer_order order);

/**
 * Sets the heap's shared finalizer: `f(m, obj, data)` runs, on the terms
 * of `mosaic_register_finalizer`, for each object registered with
 * `mosaic_register_shared_finalizer`. For objects whose finalization is
 * known from the object itself (a type word, a closure it holds): such a
 * registration costs two bits and no entry. Setting it again changes what
 * runs for objects queued from then on; each call keeps 16 bytes for the
 * process's life. Errors: `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `f` or
 * a NULL or freed heap. Any thread.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `f` a valid function,
 * safe to call on any thread running finalizers with `data`.
 */
enum mosaic_error mosaic_set_shared_finalizer(struct mosaic_heap *heap, mosaic_finalizer_fn f, void *data);

/**
 * Registers the heap's shared finalizer (`mosaic_set_shared_finalizer`)
 * for `obj`, in `order`, on the terms of `mosaic_register_finalizer`.
 * Errors: those of `mosaic_register_finalizer`, and `MOSAIC_ERR_MISUSE` if
 * no shared finalizer was set. Call on the mutator's thread.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
enum mosaic_error mosaic_register_shared_finalizer(struct mosaic_mutator *m, void *obj, mosaic_finalizer_order order);

/**
 * Whether `obj` has a finalizer registered by `mosaic_register_finalizer`
 * that a collection has not queued yet; if so, its function and data are
 * stored through `f` and `data` (each may be NULL). For an embedder that
 * must answer "what was registered" (the Boehm collector's calls return
 * the previous finalizer) without a table of its own. `false` (not an
 * error: the last error is `MOSAIC_OK`) for no finalizer, a shared one, a
 * queued one, or a value that is not an object of the heap; `false` with
 * an error for a NULL or freed mutator. Cost: a look at the object's
 * bit, and for a registered object a search of at most a few thousand
 * recent registrations plus a binary search. Call on the mutator's thread.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread; `obj` may be
 * any value; `f` and `data` NULL or writable.
 */
bool mosaic_finalizer_of(struct mosaic_mutator *m, void *obj, mosaic_finalizer_fn *f, void **data);

/**
 * Removes `obj`'s finalizer if it has not been queued yet. Returns whether
 * it had one (`false` is not an error: the last error is `MOSAIC_OK`),
 * `false` with an error for a NULL or freed mutator. Call on the mutator's
 * thread.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread; `obj` may be
 * any value.
 */
bool mosaic_unregister_finalizer(struct mosaic_mutator *m, void *obj);

/**
 * Runs every queued finalizer on this thread, oldest first, including
 * those queued by collections the finalizers themselves cause; returns
 * how many ran. Each gets `m` as its mutator. Errors (0 returned, nothing
 * run): `MOSAIC_ERR_MISUSE` inside a collector callback or a blocking
 * region; a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
size_t mosaic_run_finalizers(struct mosaic_mutator *m);

/**
 * Finalizers queued and not run yet (0 with an error for a NULL or freed
 * heap). Any thread.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`.
 */
size_t mosaic_pending_finalizers(const struct mosaic_heap *heap);

/**
 * Sets the function called when a collection has queued finalizers:
 * `f(ctx)` runs on the collecting thread once the world has resumed
 * (possibly inside the `mosaic_alloc` that collected). It should only
 * signal (set a flag, post a semaphore) for some thread to call
 * `mosaic_run_finalizers`: it must not allocate, collect or run
 * finalizers (refused with `MOSAIC_ERR_MISUSE`). NULL `f` removes it.
 * Any thread. Errors: a NULL or freed heap.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `f` NULL or a function
 * safe to call with `ctx` on any mutator thread.
 */
enum mosaic_error mosaic_set_finalizer_notifier(struct mosaic_heap *heap, mosaic_notify_fn f, void *ctx);

/**
 * Starts a thread (named `mosaic-finalizer`) that runs the queued
 * finalizers whenever a collection queues some. Each time, it makes a
 * mutator of its own (finalizers receive it as `m`, and `mutator_roots`
 * sees it while it exists), runs them all and frees that mutator. The
 * thread does not keep the heap alive while it waits, and ends when the
 * heap goes away. Any thread. Errors: `MOSAIC_ERR_MISUSE` if the heap's
 * finalizer thread is already started or the thread cannot be created; a
 * NULL or freed heap.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`.
 */
enum mosaic_error mosaic_start_finalizer_thread(struct mosaic_heap *heap);

/**
 * Frees `obj`, an object the program will not use again (like bdwgc's
 * `GC_free`): a small object's memory goes to this mutator's next
 * allocation of the same size and flags, a large object's pages back to
 * the heap at once. An object the collector still has business with (a
 * finalizer, `MOSAIC_NEEDS_CLEANUP`, an ephemeron, a pin, a weak slot
 * inside it) is left to the next collection that finds it unreachable, as
 * without the call. `*now` (if not NULL) tells whether the memory is
 * reusable before the next collection. Errors: a NULL or freed mutator;
 * `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not the start of a live object
 * of the heap; `MOSAIC_ERR_MISUSE` for an object freed twice, inside a
 * blocking region or a collector callback.
 *
 * # Safety
 * `m` must be NULL or a live mutator used only by the calling thread;
 * nothing may use `obj` after the call (a reference left where the
 * collector looks keeps nothing: the memory may hold a new object); `now`
 * must be NULL or writable.
 */
enum mosaic_error mosaic_free(struct mosaic_mutator *m, void *obj, bool *now);

/**
 * Creates a heap. `config` may be NULL (defaults plus `MOSAIC_*` variables).
 * `embedder->trace` is required. Returns NULL on error.
 *
 * # Safety
 * `config` and `embedder` must be NULL or valid pointers.
 */
struct mosaic_heap *mosaic_heap_new(const struct mosaic_config *config, const struct mosaic_embedder *embedder);

/**
 * Releases the caller's handle on the heap. The heap itself goes away once
 * every mutator is freed too; then `on_free` runs, on the thread freeing
 * that last handle, for the objects that asked for cleanup. NULL is
 * ignored (the last error is left as it was).
 *
 * The handle's few bytes stay allocated as a tombstone, so any later use of
 * a freed heap handle, freeing it again included, is reliably reported as
 * `MOSAIC_ERR_INVALID_ARGUMENT` ("heap was already freed").
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`. Freeing a heap handle
 * while another thread uses the same handle is undefined behaviour.
 */
void mosaic_heap_free(struct mosaic_heap *heap);

/**
 * Creates a mutator for the calling thread. NULL on error: a NULL or freed
 * heap, or `MOSAIC_ERR_INVALID_ARGUMENT` if the calling thread already has
 * a mutator of this heap (one mutator per thread and heap).
 *
 * A thread that exits without freeing its mutator has it detached
 * automatically, so collections no longer wait for it; its memory is
 * leaked until `mosaic_mutator_free`, which may then be called from
 * another thread.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`.
 */
struct mosaic_mutator *mosaic_mutator_new(struct mosaic_heap *heap);

/**
 * Frees a mutator. Its root handles stay valid until freed. NULL is ignored
 * (the last error is left as it was).
 *
 * A mutator freed twice, or used after it was freed, is reported as
 * `MOSAIC_ERR_INVALID_ARGUMENT` ("mutator was already freed") as long as
 * its memory has not been reused for a new mutator; the check is a cheap
 * safety net, not a guarantee, and such use is undefined behaviour.
 *
 * When this was the heap's last handle, `on_free` runs here for the objects
 * that asked for cleanup.
 *
 * Freed on its own thread inside a blocking region
 * (`mosaic_blocking_enter`), the mutator leaves the region first (waiting
 * for a collection in progress to end). It must not be freed from inside
 * one of its own finalizers or a collector callback.
 *
 * # Safety
 * `m` must be NULL or from `mosaic_mutator_new`, freed once, on its thread
 * (or on any thread once its thread has exited).
 */
void mosaic_mutator_free(struct mosaic_mutator *m);

/**
 * Sets the pointer this mutator's `mutator_roots` callback receives as
 * `mutator_data` (your interpreter's per-thread state, say); NULL clears
 * it. Call it on the mutator's thread. Errors: a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread; `data` is
 * never dereferenced by the library.
 */
enum mosaic_error mosaic_mutator_set_data(struct mosaic_mutator *m, void *data);

/**
 * The pointer set with `mosaic_mutator_set_data` (NULL if none, or with
 * an error for a NULL or freed mutator).
 *
 * # Safety
 * `m` must be NULL or a live mutator.
 */
void *mosaic_mutator_data(const struct mosaic_mutator *m);

/**
 * Allocates `size` bytes with `flags` (`MOSAIC_NO_POINTERS`, ...): zeroed,
 * unless `flags` has `MOSAIC_UNINIT`. `mosaic_alloc_inline` (below) is
 * the same without a call on its fast path.
 * The memory is aligned to 8 bytes, and to 16 when its slot size is a
 * multiple of 16 (see the top of this header; `mosaic_alloc_aligned` for
 * more). Returns NULL on error: out of memory, too large, bad flags, a
 * NULL or freed mutator, or `MOSAIC_ERR_MISUSE` inside a blocking region
 * (`mosaic_blocking_enter`) or a collector callback.
 *
 * Allocation is a safepoint and may collect on this thread (running
 * `trace`, `roots` and `mutator_roots` here) or, with lazy sweeping, sweep
 * pages (running `on_free` here); see `mosaic_embedder`.
 *
 * # Safety
 * `m` must be NULL or a live mutator used only by the calling thread.
 */
void *mosaic_alloc(struct mosaic_mutator *m, size_t size, uint32_t flags);

/**
 * Allocates `size` zeroed bytes aligned to `align`, a power of two from 1
 * to 65536 (a page): SIMD data, cache lines. The object gets the smallest
 * size class whose slots are all aligned (with the default classes that
 * is up to 4096, and the object's usable size may exceed `size`), or
 * else a large object, which starts a 64 KiB page. `align` up to 8 is
 * plain `mosaic_alloc`. Errors as `mosaic_alloc`, plus
 * `MOSAIC_ERR_INVALID_ARGUMENT` for a bad `align`.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void *mosaic_alloc_aligned(struct mosaic_mutator *m, size_t size, size_t align, uint32_t flags);

/**
 * Collects garbage now (stop-the-world): `trace`, `roots` and
 * `mutator_roots` run on this thread while the other mutators are
 * stopped. If another thread is already collecting, waits for that
 * collection instead. Refused with `MOSAIC_ERR_MISUSE` inside a collector
 * callback (`trace`, `roots`, `mutator_roots`, `on_free`, the event
 * callback, the finalizer notifier) or a blocking region
 * (`mosaic_blocking_enter`): nothing is collected then.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void mosaic_collect(struct mosaic_mutator *m);

/**
 * A full collection that then gives every free page back to the OS
 * (bdwgc's `GC_gcollect_and_unmap`): for a program about to go idle or
 * one that just dropped most of its data. An ordinary collection keeps
 * the free pages the heap target has room for. Refused like
 * `mosaic_collect`.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void mosaic_collect_and_release(struct mosaic_mutator *m);

/**
 * A minor collection (generational mode: only young objects are marked
 * and swept, see GENERATIONS at the top of this header); a full one
 * otherwise. Refused like `mosaic_collect`.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void mosaic_collect_young(struct mosaic_mutator *m);

/**
 * The write barrier (see GENERATIONS at the top of this header): call
 * it for every store of a reference into `obj`, an object allocated
 * `MOSAIC_BARRIERED`, before or after the store with no allocation or
 * safepoint in between. `mosaic_write_barrier_inline` calls it only when
 * needed. In verify mode (and debug builds) it aborts with a diagnostic
 * if `obj` is not the start of an object of the heap. Never sets the
 * last error (it is called far too often to reset it).
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void mosaic_write_barrier(struct mosaic_mutator *m, void *obj);

/**
 * Copies `count` reference fields from `src` to `dst` (which may
 * overlap, as `memmove`), where `dst` lies inside `obj`, with one write
 * barrier on `obj` for all of them.
 *
 * # Safety
 * As `mosaic_alloc`; `src` readable and `dst` writable for `count`
 * pointer-sized, aligned fields, `dst .. dst + count` inside `obj`.
 */
void mosaic_copy_refs(struct mosaic_mutator *m, void *obj, void **dst, void *const *src, size_t count);

/**
 * Sweeps every page left unswept since the last collection (`on_free` runs
 * on this thread for the dead objects found). Refused with
 * `MOSAIC_ERR_MISUSE` inside a blocking region or a collector callback.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void mosaic_finish_sweep(struct mosaic_mutator *m);

/**
 * Parks here if another thread wants to collect. Call it in long loops
 * that do not allocate. Does nothing inside a blocking region. Refused
 * with `MOSAIC_ERR_MISUSE` inside a collector callback (parking there
 * would wait for the collection the callback is part of, or stop the
 * world in the middle of a sweep).
 *
 * # Safety
 * As `mosaic_alloc`.
 */
void mosaic_safepoint(struct mosaic_mutator *m);

/**
 * Runs `f(arg)` as a blocking region (a system call, a lock wait): other
 * threads may collect meanwhile. `f` must not touch the heap or call
 * mosaic functions, and must return normally (no `longjmp` out of it).
 * Inside a region entered with `mosaic_blocking_enter`, just calls `f`.
 * Refused with `MOSAIC_ERR_MISUSE` inside a collector callback (`f` is
 * not called).
 *
 * # Safety
 * As `mosaic_alloc`; `f` must be a valid function.
 */
void mosaic_blocking(struct mosaic_mutator *m, void (*f)(void *arg), void *arg);

/**
 * Enters a blocking region, for code that blocks where a callback does not
 * fit (`mosaic_blocking` with the wait written inline). Until
 * `mosaic_blocking_leave`, other threads collect without waiting for this
 * one, so the code in between must not read or write heap objects (root
 * handles may be used), and this mutator refuses to allocate, collect,
 * sweep, run finalizers or push and pop scope slots (`MOSAIC_ERR_MISUSE`).
 * Errors: `MOSAIC_ERR_MISUSE` if already inside a region or inside a
 * collector callback; a NULL or freed mutator.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
enum mosaic_error mosaic_blocking_enter(struct mosaic_mutator *m);

/**
 * Leaves the blocking region entered with `mosaic_blocking_enter`,
 * waiting first for a collection in progress to end. Errors:
 * `MOSAIC_ERR_MISUSE` outside a region; a NULL or freed mutator.
 *
 * # Safety
 * As `mosaic_alloc`.
 */
enum mosaic_error mosaic_blocking_leave(struct mosaic_mutator *m);

/**
 * Whether `p` is the start of an object allocated in `heap`. Any other `p`
 * gets `false` and counts as success; a NULL or freed heap gets `false`
 * and `MOSAIC_ERR_INVALID_ARGUMENT`.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `p` may be any value.
 */
bool mosaic_is_object(const struct mosaic_heap *heap, const void *p);

/**
 * The usable size of an object (its slot size), or 0 with
 * `MOSAIC_ERR_FOREIGN_POINTER` if `p` is not an object of `heap`.
 *
 * # Safety
 * As `mosaic_is_object`.
 */
size_t mosaic_object_size(const struct mosaic_heap *heap, const void *p);

/**
 * Pins `obj`: no compaction moves it until it has been unpinned as many
 * times as it was pinned (pins are counted). Pinning does not keep the
 * object alive: keep it reachable as usual. Use it while C code holds the
 * object's address where the collector does not look (a pointer handed to
 * the OS, a hash table keyed by address). Errors: a NULL or freed
 * mutator, `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `obj`,
 * `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not the start of an object of
 * the heap, `MOSAIC_ERR_MISUSE` inside a blocking region or a collector
 * callback.
 *
 * # Safety
 * `m` must be NULL or a live mutator used only by the calling thread;
 * `obj` may be any value.
 */
enum mosaic_error mosaic_pin(struct mosaic_mutator *m, void *obj);

/**
 * Removes one pin of `obj` (see `mosaic_pin`). Errors: a NULL or freed
 * mutator; `MOSAIC_ERR_INVALID_ARGUMENT` if `obj` is NULL or has no pin
 * left (an object allocated `MOSAIC_PINNED` stays pinned for life and has
 * no pin to remove); `MOSAIC_ERR_MISUSE` inside a blocking region or a
 * collector callback.
 *
 * # Safety
 * As `mosaic_pin`.
 */
enum mosaic_error mosaic_unpin(struct mosaic_mutator *m, void *obj);

/**
 * Whether `obj` is pinned now: allocated `MOSAIC_PINNED` or pinned with
 * `mosaic_pin`. (Large objects never move, pinned or not; an object an
 * ambiguous word pointed to is pinned only during that collection.) Any
 * `obj` that is not an object of `heap` gets `false` and counts as
 * success; a NULL or freed heap gets `false` and
 * `MOSAIC_ERR_INVALID_ARGUMENT`.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `obj` may be any value.
 */
bool mosaic_is_pinned(const struct mosaic_heap *heap, const void *obj);

/**
 * Collects, then compacts every size pool (like Ruby's `GC.compact`):
 * every live object that is not pinned (`MOSAIC_PINNED`, `mosaic_pin`, or
 * pointed to by an ambiguous word: `mosaic_visit_ambiguous`, a
 * conservatively scanned stack) may move to fill the pages in the
 * configured order (`compact_toward` in `mosaic_config`), and pages left
 * empty go back to the heap. Afterwards only the references the collector
 * knows hold the new addresses: the fields `trace` reports, the slots
 * `roots` and `mutator_roots` report, root handles, scope slots, weak
 * handles, weak slots and ephemerons. Any other copy of an object's
 * address is stale (see MOVING at the top of this header); `on_move`
 * tells the embedder of each move. Large objects never move. Errors: a
 * NULL or freed mutator, `MOSAIC_ERR_MISUSE` inside a blocking region or
 * a collector callback (nothing is collected then).
 *
 * # Safety
 * As `mosaic_pin`.
 */
enum mosaic_error mosaic_compact(struct mosaic_mutator *m);

/**
 * `mosaic_compact` filling pages in the order given
 * (`MOSAIC_COMPACT_PINNED_FIRST` or `MOSAIC_COMPACT_ADDRESS`) instead of
 * the configured one, to compare orders. An unknown `order` is
 * `MOSAIC_ERR_INVALID_ARGUMENT` (nothing is collected); other errors as
 * `mosaic_compact`.
 *
 * # Safety
 * As `mosaic_pin`.
 */
enum mosaic_error mosaic_compact_toward(struct mosaic_mutator *m, mosaic_compact_order order);

/**
 * Scans the calling thread's stack and callee-saved registers
 * conservatively at every collection (`on` true), or stops (`on` false).
 * Every word there that points into an object (interior pointers
 * included) keeps it alive and pinned for that collection, so C code may
 * hold objects in plain locals, without a root, scope slot or shadow
 * stack, and they neither die nor move. The words are recorded where the
 * thread stops for a collection: in `mosaic_alloc` (or any call that may
 * collect), `mosaic_collect`, `mosaic_safepoint`, or on entering a
 * blocking region; code running inside a blocking region must leave heap
 * objects alone as always. Call it on `m`'s thread (the mutator's own
 * stack is the one scanned). Errors: a NULL or freed mutator;
 * `MOSAIC_ERR_INVALID_ARGUMENT` where the platform cannot tell where the
 * thread's stack is (nothing changes); `MOSAIC_ERR_MISUSE` inside a
 * blocking region or a collector callback.
 *
 * # Safety
 * As `mosaic_pin`.
 */
enum mosaic_error mosaic_conservative_stack(struct mosaic_mutator *m, bool on);

/**
 * Writes a heap dump to the file `path` (created or truncated): one JSON
 * object per line, like Ruby's `ObjectSpace.dump_all`. First a `HEAP`
 * line (page size, pages in use, objects), then a `PAGE` line per
 * small-object page in address order (pool, slot size, slots, live and
 * pinned counts), then an `OBJECT` line per live object (address, page,
 * slot, pool, size, pinned, flags, and `type_name` when the embedder's
 * `type_name` callback names it; large objects have `"large":true`).
 * The world is stopped while the file is written, so the dump is one
 * consistent moment; nothing is collected. `mosaic-heapviz` draws it.
 * Errors: a NULL or freed mutator, `MOSAIC_ERR_INVALID_ARGUMENT` for a
 * NULL `path` or a file that cannot be written (the message says why),
 * `MOSAIC_ERR_MISUSE` inside a blocking region or a collector callback.
 *
 * # Safety
 * As `mosaic_pin`; `path` must be NULL or a NUL-terminated string.
 */
enum mosaic_error mosaic_dump_heap(struct mosaic_mutator *m, const char *path);

/**
 * A weak handle on `obj`: `mosaic_weak_get` returns `obj` until a
 * collection finds it dead (`kind` says when: `MOSAIC_WEAK_SHORT` or
 * `MOSAIC_WEAK_LONG`), then NULL. Clearing happens only inside a
 * collection, so what `mosaic_weak_get` returns is NULL or a live object.
 * Returns NULL on error: `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not an
 * object of the heap, `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL `obj`, an
 * unknown `kind`, a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
struct mosaic_weak *mosaic_weak_new(struct mosaic_mutator *m, void *obj, mosaic_weak_kind kind);

/**
 * The object a weak handle holds, or NULL once it died (or with an error
 * if `w` is NULL or freed). Call it on a thread whose mutator of the heap
 * is attached (not in a blocking region), and store the result in a root,
 * a scope slot or a traced field before the next safepoint if it must
 * stay alive: the weak handle does not keep it.
 *
 * # Safety
 * `w` must be NULL or a live weak handle.
 */
void *mosaic_weak_get(const struct mosaic_weak *w);

/**
 * Frees a weak handle, on any thread. NULL is ignored (the last error is
 * left as it was); a handle freed twice is reported as
 * `MOSAIC_ERR_INVALID_ARGUMENT` on a best-effort basis, as for roots.
 *
 * # Safety
 * `w` must be NULL or from `mosaic_weak_new`, freed once.
 */
void mosaic_weak_free(struct mosaic_weak *w);

/**
 * Registers a weak slot (a "disappearing link"): `slot` is the address of
 * a pointer field inside a live object of the heap, and a collection that
 * finds the object the field points to dead sets the field to NULL
 * (`kind` says when: `MOSAIC_WEAK_SHORT` or `MOSAIC_WEAK_LONG`). The field
 * may hold NULL, an object of the heap or a pointer outside the heap
 * (never cleared). `trace` should *not* visit the field, or it keeps its
 * target alive. The registration ends when the object holding the slot
 * dies, or with `mosaic_unregister_weak_slot`. Call on the mutator's
 * thread.
 *
 * Errors: `MOSAIC_ERR_INVALID_ARGUMENT` if `slot` is not inside a live
 * object of this heap (a global, a stack variable) or not aligned to a
 * pointer, or for an unknown `kind`; `MOSAIC_ERR_ALREADY_REGISTERED` if
 * the slot is registered already; a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread. While
 * registered, the field must only hold what is described above, and the
 * program must expect the collector to write NULL into it.
 */
enum mosaic_error mosaic_register_weak_slot(struct mosaic_mutator *m, void **slot, mosaic_weak_kind kind);

/**
 * Ends a weak slot's registration. Returns whether it was registered
 * (`false` is not an error: the last error is `MOSAIC_OK`), `false` with
 * an error for a NULL or freed mutator. Call on the mutator's thread.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread; `slot` may be
 * any value.
 */
bool mosaic_unregister_weak_slot(struct mosaic_mutator *m, void **slot);

/**
 * Allocates an ephemeron: a heap object holding two pointer words, `key`
 * at offset `H` and `value` at offset `H + 8`, readable in place
 * (`((void **)e)[H / 8]`, `[H / 8 + 1]`) or with `mosaic_ephemeron_key`
 * and `mosaic_ephemeron_value`, where `H` is the heap's
 * `ephemeron_header` (0 by default: a 16-byte object). The `H` bytes
 * before the key are the embedder's (a type header; zeroed at
 * allocation): with `H > 0`, `trace` is called on the ephemeron like on
 * any object and must visit the header's references only, never the key
 * and value. Nothing is kept per ephemeron outside the object. The value is kept alive only while the key is
 * reachable by other paths (not through this ephemeron's value); when a
 * collection finds the key dead it sets both words to NULL. The ephemeron
 * itself is an ordinary object: keep it alive with a root or a traced
 * field (a weak table's buckets), and have `trace` visit the fields that
 * hold it; never write its words directly, use `mosaic_ephemeron_set`.
 * `key` must be NULL or an object of the heap; `value` may be anything a
 * traced field may hold. Both survive the allocation even if it collects.
 *
 * Returns NULL on error: `MOSAIC_ERR_INVALID_ARGUMENT` if `key` is not an
 * object of the heap; the errors of `mosaic_alloc`.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
void *mosaic_ephemeron_new(struct mosaic_mutator *m, void *key, void *value);

/**
 * An ephemeron's key: NULL once the key died (or if it was never set), or
 * with `MOSAIC_ERR_INVALID_ARGUMENT` if `e` is not an ephemeron of the
 * heap (or the heap is NULL or freed). Call it on a thread whose mutator
 * of the heap is attached.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `e` may be any value.
 */
void *mosaic_ephemeron_key(const struct mosaic_heap *heap, const void *e);

/**
 * An ephemeron's value: NULL once the key died, or with an error as
 * `mosaic_ephemeron_key`.
 *
 * # Safety
 * As `mosaic_ephemeron_key`.
 */
void *mosaic_ephemeron_value(const struct mosaic_heap *heap, const void *e);

/**
 * Replaces an ephemeron's key and value (same rules as
 * `mosaic_ephemeron_new`). Call on the mutator's thread. Errors:
 * `MOSAIC_ERR_INVALID_ARGUMENT` if `e` is not an ephemeron of the heap or
 * `key` not an object of it; a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
enum mosaic_error mosaic_ephemeron_set(struct mosaic_mutator *m, void *e, void *key, void *value);

/**
 * A new root holding `obj` (NULL for none). Returns NULL with
 * `MOSAIC_ERR_FOREIGN_POINTER` if `obj` is not an object of the heap.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
struct mosaic_root *mosaic_root_new(struct mosaic_mutator *m, void *obj);

/**
 * The object a root holds: NULL if none, or with an error if `r` is NULL
 * or freed.
 *
 * # Safety
 * `r` must be NULL or a live root, used on its mutator's thread.
 */
void *mosaic_root_get(const struct mosaic_root *r);

/**
 * Makes a root hold `obj` (NULL for none).
 *
 * # Safety
 * As `mosaic_root_get`.
 */
void mosaic_root_set(struct mosaic_root *r, void *obj);

/**
 * Frees a root. NULL is ignored (the last error is left as it was).
 *
 * A root freed twice, or used after it was freed, is reported as
 * `MOSAIC_ERR_INVALID_ARGUMENT` ("root was already freed (or is not a
 * root)") as long as its memory has not been reused for a new root; the
 * check is a cheap safety net, not a guarantee, and such use is undefined
 * behaviour.
 *
 * # Safety
 * `r` must be NULL or from `mosaic_root_new`, freed once, on its thread.
 */
void mosaic_root_free(struct mosaic_root *r);

/**
 * The depth of the mutator's scope: save it, add slots, then close back to
 * it with `mosaic_scope_close`. 0 with an error for a NULL or freed
 * mutator (0 is also the depth of an empty scope: check
 * `mosaic_last_error()` if that matters).
 *
 * ```c
 * size_t depth = mosaic_scope_open(m);
 * Node *n = NULL;
 * mosaic_scope_add(m, (void **)&n);   // n survives collections, and
 * n = mosaic_alloc(m, sizeof *n, 0);  // would be updated if it moved
 * ...
 * mosaic_scope_close(m, depth);
 * ```
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread.
 */
size_t mosaic_scope_open(struct mosaic_mutator *m);

/**
 * Pushes `slot`, the address of a pointer variable, onto the mutator's
 * scope: until closed, every collection visits it like a root (it keeps
 * its object alive and would be updated if the object moved). The
 * variable may hold NULL, an object of the heap or a pointer outside the
 * heap, and must stay valid (its function must not return) until its
 * scope is closed. No lock; no allocation beyond growing the stack.
 * Errors: `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL or misaligned slot;
 * `MOSAIC_ERR_MISUSE` inside a blocking region (a collection may be
 * reading the scope); a NULL or freed mutator.
 *
 * # Safety
 * `m` must be NULL or a live mutator of the calling thread; `slot` a
 * writable pointer-sized variable that outlives its scope.
 */
enum mosaic_error mosaic_scope_add(struct mosaic_mutator *m, void **slot);

/**
 * Pops the scope back to `depth` (a value `mosaic_scope_open` returned):
 * the slots added since are no longer visited. Errors:
 * `MOSAIC_ERR_INVALID_ARGUMENT` if `depth` is deeper than the scope (it
 * was closed already: the scope is left as it is); `MOSAIC_ERR_MISUSE`
 * inside a blocking region; a NULL or freed mutator.
 *
 * # Safety
 * As `mosaic_scope_open`.
 */
enum mosaic_error mosaic_scope_close(struct mosaic_mutator *m, size_t depth);

/**
 * Fills `out` with the heap's statistics.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `out` NULL or writable.
 */
enum mosaic_error mosaic_heap_stats(const struct mosaic_heap *heap, struct mosaic_stats *out);

/**
 * Fills `out` with the statistics of pool `index` (0 ..< pool_count).
 *
 * # Safety
 * As `mosaic_heap_stats`.
 */
enum mosaic_error mosaic_heap_pool_stats(const struct mosaic_heap *heap, size_t index, struct mosaic_pool_stats *out);

/**
 * Writes the one-line summary into `buf` (NUL-terminated, truncated to
 * `len`). Returns the summary's full length, like `snprintf`; 0 with
 * `MOSAIC_ERR_INVALID_ARGUMENT` for a NULL or freed heap.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`; `buf` NULL or writable
 * for `len` bytes.
 */
size_t mosaic_stats_summary(const struct mosaic_heap *heap, char *buf, size_t len);

/**
 * Changes the heap's maximum size to `bytes` (rounded down to whole
 * pages): lowered at run time, or raised back up to at most the
 * `max_heap` the heap was created with. Returns the new maximum. Memory
 * in use above a lowered maximum stays; allocations that need more pages
 * collect, then fail with `MOSAIC_ERR_OUT_OF_MEMORY`. Any thread. Errors
 * (0 returned): `MOSAIC_ERR_INVALID_ARGUMENT` for `bytes` above the
 * creation maximum or below one page, a NULL or freed heap.
 *
 * # Safety
 * `heap` must be NULL or from `mosaic_heap_new`.
 */
size_t mosaic_set_max_heap(const struct mosaic_heap *heap, size_t bytes);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MOSAIC_H */

#ifndef MOSAIC_INLINE_H
#define MOSAIC_INLINE_H
/*
 * INLINE FAST PATHS. mosaic_alloc_inline is mosaic_alloc(m, size, 0)
 * without a call while the mutator's current run of that size class has
 * room: a pointer bump and a compare, then the library call when the run
 * is used up (which counts the allocation, may collect, and reports
 * errors). One difference: a success here does not reset the thread's
 * last error. mosaic_safepoint_inline calls mosaic_safepoint only when
 * another thread waits for this one. fp is mosaic_mutator_fast_path(m),
 * fetched once; both are valid while m lives, on m's thread only.
 */
static inline void *mosaic_alloc_inline(mosaic_mutator *m, const mosaic_fast_path *fp, size_t size) {
    size_t i = (size + 7) >> 3;
    if (i < fp->class_of_len) {
        mosaic_alloc_buffer *b = &fp->buffers[fp->class_of[i]];
        uintptr_t next = b->cursor + b->slot_size;
        if (next <= b->limit) {
            void *p = (void *)b->cursor;
            b->cursor = next;
            return p;
        }
    }
    return mosaic_alloc(m, size, 0);
}

static inline void mosaic_safepoint_inline(mosaic_mutator *m, const mosaic_fast_path *fp) {
#if defined(__GNUC__) || defined(__clang__)
    if (__atomic_load_n(fp->safepoint_requested, __ATOMIC_ACQUIRE))
#else
    if (*(const volatile uint8_t *)fp->safepoint_requested)
#endif
        mosaic_safepoint(m);
}

/*
 * The write barrier's fast path (see GENERATIONS): one load and a test;
 * the library call only for an old object not yet logged since the last
 * collection (or always, with fp->barrier_checks).
 */
static inline void mosaic_write_barrier_inline(mosaic_mutator *m, const mosaic_fast_path *fp, void *obj) {
    uintptr_t off = (uintptr_t)obj - fp->log_base;
    if (fp->barrier_checks) {
        mosaic_write_barrier(m, obj);
    } else if (off < fp->log_len) {
        uintptr_t g = off >> 3;
        if (fp->log_bits[g >> 6] & ((uint64_t)1 << (g & 63)))
            mosaic_write_barrier(m, obj);
    }
}
#endif /* MOSAIC_INLINE_H */
