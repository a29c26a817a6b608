// binary-trees (Benchmarks Game). A leaf is a node with two null children,
// allocated like every other node.
// usage: java [-Dmosaic.warmup=N] BinaryTrees N   (timed in-process; see Pauses)
public class BinaryTrees {
    static final class Node {
        Node l, r;
        Node(Node l, Node r) { this.l = l; this.r = r; }
    }

    static Node make(int d) { return d == 0 ? new Node(null, null) : new Node(make(d - 1), make(d - 1)); }
    static long check(Node n) { return n.l == null ? 1 : 1 + check(n.l) + check(n.r); }

    static long runOnce(int n) {
        int min = 4, max = Math.max(min + 2, n);
        long total = check(make(max + 1));
        Node longLived = make(max);
        for (int d = min; d <= max; d += 2)
            for (long i = 0; i < 1L << (max - d + min); i++) total += check(make(d));
        total += check(longLived);
        return total;
    }

    public static void main(String[] args) {
        Pauses.install();
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        for (int i = 0; i < Pauses.warmups(); i++) runOnce(n);
        Pauses.begin();
        long total = runOnce(n);
        Pauses.report(total);
    }
}
