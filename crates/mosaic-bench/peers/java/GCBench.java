// GCBench (Ellis, Kovac, Boehm), the same algorithm as the Mosaic and C
// versions.
// usage: java [-Dmosaic.warmup=N] GCBench HOLES THREADS [STRETCH LONG_LIVED ARRAY_SIZE MIN_DEPTH MAX_DEPTH]
// (defaults: the published 18 16 500000 4 16; heap limit: -Xmx). The run is
// timed from starting the threads to joining them; see Pauses for warm-up.
public class GCBench {
    static final class Node {
        Node left, right;
        int i, j;
    }

    static int stretch = 18, longLivedDepth = 16, arraySize = 500000, minDepth = 4, maxDepth = 16;
    static boolean holes;

    static long treeSize(int d) { return (1L << (d + 1)) - 1; }
    static long numIters(int d) { return 2 * treeSize(stretch) / treeSize(d); }

    /** One thread's state and work; created on that thread (its own TLAB). */
    static final class Bench {
        long rng;
        // The last hole: a plain field (no fence per store, as in the Go
        // peer), read once at the end so the stores are not dead.
        Object sink;
        Bench(long seed) { rng = seed; }

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

        long run() {
            makeTree(stretch);
            Node longLived = new Node();
            populate(longLivedDepth, longLived);
            double[] array = new double[arraySize];
            for (int i = 0; i < arraySize / 2; i++) array[i] = 1.0 / i;
            long trees = 0;
            for (int d = minDepth; d <= maxDepth; d += 2) {
                long iters = numIters(d);
                for (long i = 0; i < iters; i++) {
                    populate(d, new Node());
                    trees++;
                }
                for (long i = 0; i < iters; i++) {
                    makeTree(d);
                    trees++;
                }
            }
            if (array[1000] != 1.0 / 1000) throw new AssertionError("array corrupted");
            if (holes && sink == null) throw new AssertionError("no hole allocated");
            return count(longLived) * 1_000_000L + trees;
        }
    }

    static final class Worker implements Runnable {
        final long seed;
        long check;
        Worker(long seed) { this.seed = seed; }
        public void run() { check = new Bench(seed).run(); }
    }

    static long runOnce(int threads) throws InterruptedException {
        Worker[] w = new Worker[threads];
        Thread[] t = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            w[i] = new Worker(42 + i);
            t[i] = new Thread(w[i]);
            t[i].start();
        }
        for (int i = 0; i < threads; i++) t[i].join();
        for (int i = 0; i < threads; i++)
            if (w[i].check != w[0].check) throw new AssertionError("threads disagree");
        return w[0].check;
    }

    public static void main(String[] args) throws Exception {
        Pauses.install();
        holes = args.length > 0 && args[0].equals("1");
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        if (args.length > 6) {
            stretch = Integer.parseInt(args[2]);
            longLivedDepth = Integer.parseInt(args[3]);
            arraySize = Integer.parseInt(args[4]);
            minDepth = Integer.parseInt(args[5]);
            maxDepth = Integer.parseInt(args[6]);
        }
        for (int i = 0; i < Pauses.warmups(); i++) runOnce(threads);
        Pauses.begin();
        long check = runOnce(threads);
        Pauses.report(check);
    }
}
