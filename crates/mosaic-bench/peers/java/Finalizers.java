// Finalizers on the JVM, the steps of Mosaic's worker (src/workloads/refs.rs,
// `--only finalizers`), with java.lang.ref.Cleaner (finalize() is
// deprecated): N list nodes (next, id: 24 bytes with a 12-byte header)
// held by a static root; a timed loop registers each node with one Cleaner
// (cleaner.register(node, ACTION), ACTION one shared Runnable incrementing
// an AtomicLong); the list is dropped, System.gc() runs and the Cleaner's
// thread runs the actions; the body waits (System.gc() every 100 ms, at
// most 10 s) until all N ran.
//
// Memory per registration: the JVM's heap is reserved and touched as it
// grows, so its RSS says little about one loop; this reports the heap in
// use (MemoryMXBean, after a System.gc()) after the loop minus before it,
// over N: the Cleanable objects. Those two collections and reads are not
// in the time.
//
// -Dmosaic.warmup=W runs the whole body W times before the reported run.
// Prints TIME (allocation, registration, collection, the actions run) and
//   RESULT {"check": 1 if all N ran, "n", "ran", "ns_per_register",
//           "heap_bytes_per_item" (the heap in use, above), "rss_bytes_per_item"
//           (VmRSS after the loop minus before, over N)}
// and exits 1 if not every action ran.
// usage: java [-Dmosaic.warmup=W] Finalizers [N]   (N = 781000 by default)
import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicLong;

public class Finalizers {
    static final class Node {
        Node next;
        int id;
    }

    static final AtomicLong RAN = new AtomicLong();
    static final Runnable ACTION = RAN::incrementAndGet;
    static final Cleaner CLEANER = Cleaner.create();
    static Node head; // the root

    static void build(int n) {
        for (int i = 0; i < n; i++) {
            Node x = new Node();
            x.next = head;
            x.id = i;
            head = x;
        }
    }

    static void registerAll() {
        for (Node x = head; x != null; x = x.next) CLEANER.register(x, ACTION);
    }

    /** One run of the body; prints the result if {@code report}. */
    static boolean run(int n, boolean report) throws InterruptedException {
        RAN.set(0);
        MemoryProbe.reset();
        long start = System.nanoTime();
        build(n);
        long usedBefore = MemoryProbe.usedAfterGc();
        long rssBefore = MemoryProbe.rssKb();
        long t0 = System.nanoTime();
        registerAll();
        double ns = n > 0 ? (double) (System.nanoTime() - t0) / n : 0;
        long rssAfter = MemoryProbe.rssKb();
        long usedAfter = MemoryProbe.usedAfterGc();
        head = null;
        long deadline = System.nanoTime() + 10_000_000_000L;
        long nextGc = 0;
        while (RAN.get() < n && System.nanoTime() < deadline) {
            if (System.nanoTime() >= nextGc) {
                System.gc();
                nextGc = System.nanoTime() + 100_000_000L;
            }
            Thread.sleep(1);
        }
        long elapsed = System.nanoTime() - start - MemoryProbe.measuringNs;
        long ran = RAN.get();
        boolean ok = ran == n;
        if (report) {
            System.out.printf("TIME %.3f%n", elapsed / 1e6);
            System.out.printf("RESULT {\"check\": %d, \"n\": %d, \"ran\": %d, \"ns_per_register\": %.2f, "
                    + "\"heap_bytes_per_item\": %.2f, \"rss_bytes_per_item\": %.2f}%n",
                    ok ? 1 : 0, n, ran, ns, n > 0 ? (double) (usedAfter - usedBefore) / n : 0,
                    n > 0 ? (rssAfter - rssBefore) * 1024.0 / n : 0);
        }
        if (!ok) System.err.printf("check failed: %d of %d cleaning actions ran%n", ran, n);
        return ok;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 781000;
        for (int i = 0; i < Integer.getInteger("mosaic.warmup", 0); i++)
            if (!run(n, false)) System.exit(1);
        System.exit(run(n, true) ? 0 : 1);
    }
}
