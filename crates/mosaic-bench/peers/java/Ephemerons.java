// A weak-keyed table on the JVM, the steps of Mosaic's worker
// (src/workloads/refs.rs, `--only ephemerons`): a
// java.util.WeakHashMap<Key, Value> of N entries, keys and values fresh
// objects holding the entry's id (an int: 16 bytes each with the 12-byte
// header of compressed class pointers; Key.hashCode is the id, equality is
// identity), every key also held by an array while the map is filled. Then
// every 10th key is kept (a second array), the first array dropped, and the
// body runs System.gc() (again every 100 ms, at most 10 s) until
// map.size() (which expunges the cleared entries) is N/10.
//
// Check: map.size() == N/10 (the dropped keys' entries are gone) and
// every kept key maps to a value with its id.
//
// Memory per entry: the JVM's heap is reserved and touched as it grows, so
// its RSS says little about one loop; this reports the heap in use
// (MemoryMXBean, after a System.gc()) after the insertion loop minus
// before it, over N (key and value included: the suite subtracts
// key_value_bytes). Those two collections and reads are not in the time.
//
// -Dmosaic.warmup=W runs the whole body W times before the reported run.
// Prints TIME (allocation, insertion, dropping the keys, collecting until
// the map shrank) and
//   RESULT {"check", "n", "kept", "kept_ok", "cleared_ok", "size",
//           "ns_per_insert", "heap_bytes_per_entry" (above),
//           "rss_bytes_per_entry" (VmRSS after the loop minus before, over
//           N), "key_value_bytes": 32}
// and exits 1 if the check failed.
// usage: java [-Dmosaic.warmup=W] Ephemerons [N]   (N = 781000 by default)
import java.util.WeakHashMap;

public class Ephemerons {
    static final class Key {
        final int id;
        Key(int id) { this.id = id; }
        @Override public int hashCode() { return id; }
    }

    static final class Value {
        final int id;
        Value(int id) { this.id = id; }
    }

    /** Bytes of one Key and one Value (16 each). */
    static final int KEY_VALUE_BYTES = 32;

    // The roots.
    static Key[] keys;
    static Key[] kept;
    static WeakHashMap<Key, Value> map;

    static void insertAll(int n) {
        map = new WeakHashMap<>();
        for (int i = 0; i < n; i++) {
            Key k = new Key(i);
            keys[i] = k;
            map.put(k, new Value(i));
        }
    }

    /** One run of the body; prints the result if {@code report}. */
    static boolean run(int n, boolean report) throws InterruptedException {
        int nKept = (n + 9) / 10;
        map = null;
        kept = null;
        MemoryProbe.reset();
        long start = System.nanoTime();
        keys = new Key[n];
        long usedBefore = MemoryProbe.usedAfterGc();
        long rssBefore = MemoryProbe.rssKb();
        long t0 = System.nanoTime();
        insertAll(n);
        double ns = n > 0 ? (double) (System.nanoTime() - t0) / n : 0;
        long rssAfter = MemoryProbe.rssKb();
        long usedAfter = MemoryProbe.usedAfterGc();
        kept = new Key[nKept];
        for (int j = 0; j < nKept; j++) kept[j] = keys[10 * j];
        keys = null;
        long deadline = System.nanoTime() + 10_000_000_000L;
        long nextGc = 0;
        while (map.size() != nKept && System.nanoTime() < deadline) {
            if (System.nanoTime() >= nextGc) {
                System.gc();
                nextGc = System.nanoTime() + 100_000_000L;
            }
            Thread.sleep(1);
        }
        long elapsed = System.nanoTime() - start - MemoryProbe.measuringNs;
        int size = map.size();
        int keptOk = 0;
        for (int j = 0; j < nKept; j++) {
            Value v = map.get(kept[j]);
            if (v != null && v.id == 10 * j && kept[j].id == 10 * j) keptOk++;
        }
        // Entries of dropped keys left: size - keptOk.
        int clearedOk = n - nKept - Math.max(0, size - keptOk);
        boolean ok = size == nKept && keptOk == nKept;
        if (report) {
            System.out.printf("TIME %.3f%n", elapsed / 1e6);
            System.out.printf("RESULT {\"check\": %d, \"n\": %d, \"kept\": %d, \"kept_ok\": %d, \"cleared_ok\": %d, "
                    + "\"size\": %d, \"ns_per_insert\": %.2f, \"heap_bytes_per_entry\": %.2f, "
                    + "\"rss_bytes_per_entry\": %.2f, \"key_value_bytes\": %d}%n",
                    ok ? 1 : 0, n, nKept, keptOk, clearedOk, size, ns,
                    n > 0 ? (double) (usedAfter - usedBefore) / n : 0,
                    n > 0 ? (rssAfter - rssBefore) * 1024.0 / n : 0, KEY_VALUE_BYTES);
        }
        if (!ok)
            System.err.printf("check failed: map size %d (want %d), %d of %d kept keys map to their value%n",
                    size, nKept, keptOk, nKept);
        return ok;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 781000;
        for (int i = 0; i < Integer.getInteger("mosaic.warmup", 0); i++)
            if (!run(n, false)) System.exit(1);
        System.exit(run(n, true) ? 0 : 1);
    }
}
