// GCBench (Ellis, Kovac, Boehm), the same algorithm as the Mosaic and C
// versions. usage: java GCBench HOLES THREADS   (heap limit: -Xmx)
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

public class GCBench {
    static final class Node {
        Node left, right;
        int i, j;
    }

    static final int STRETCH = 18, LONG_LIVED = 16, ARRAY_SIZE = 500000, MIN_DEPTH = 4, MAX_DEPTH = 16;
    static boolean holes;

    static long treeSize(int d) { return (1L << (d + 1)) - 1; }
    static long numIters(int d) { return 2 * treeSize(STRETCH) / treeSize(d); }

    static final class Worker implements Runnable {
        long rng, check;
        static volatile Object sink;
        Worker(long seed) { rng = seed; }

        long next() {
            long x = rng;
            x ^= x >>> 12;
            x ^= x << 25;
            x ^= x >>> 27;
            rng = x;
            return x * 0x2545F4914F6CDD1DL;
        }

        void hole() {
            if (!holes) return;
            long r = next();
            int k = Math.min(Long.numberOfTrailingZeros(r), 7);
            int base = 16 << k;
            sink = new byte[base + (int) Long.remainderUnsigned(next(), base)];
        }

        void populate(int depth, Node n) {
            if (depth <= 0) return;
            n.left = new Node();
            hole();
            n.right = new Node();
            hole();
            populate(depth - 1, n.left);
            populate(depth - 1, n.right);
        }

        Node makeTree(int depth) {
            Node n;
            if (depth <= 0) {
                n = new Node();
            } else {
                Node l = makeTree(depth - 1), r = makeTree(depth - 1);
                n = new Node();
                n.left = l;
                n.right = r;
            }
            hole();
            return n;
        }

        static long count(Node n) { return n == null ? 0 : 1 + count(n.left) + count(n.right); }

        public void run() {
            makeTree(STRETCH);
            Node longLived = new Node();
            populate(LONG_LIVED, longLived);
            double[] array = new double[ARRAY_SIZE];
            for (int i = 0; i < ARRAY_SIZE / 2; i++) array[i] = 1.0 / i;
            long trees = 0;
            for (int d = MIN_DEPTH; d <= MAX_DEPTH; d += 2) {
                for (long i = 0; i < numIters(d); i++) {
                    populate(d, new Node());
                    trees++;
                }
                for (long i = 0; i < numIters(d); i++) {
                    makeTree(d);
                    trees++;
                }
            }
            if (array[1000] != 1.0 / 1000) throw new AssertionError("array corrupted");
            check = count(longLived) * 1_000_000L + trees;
        }
    }

    public static void main(String[] args) throws Exception {
        Pauses.install();
        holes = args.length > 0 && args[0].equals("1");
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        Worker[] w = new Worker[threads];
        Thread[] t = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            w[i] = new Worker(42 + i);
            t[i] = new Thread(w[i]);
            t[i].start();
        }
        for (int i = 0; i < threads; i++) {
            t[i].join();
            if (w[i].check != w[0].check) throw new AssertionError("threads disagree");
        }
        Pauses.report(w[0].check);
    }
}
