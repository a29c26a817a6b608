// Memory readings for the Java peers of `--only finalizers,ephemerons`:
// the heap in use after a full collection (whose time is kept apart, so a
// benchmark can take it out of its body's time) and the process's VmRSS.
import java.lang.management.ManagementFactory;

final class MemoryProbe {
    /** Nanoseconds spent measuring since the last reset. */
    static long measuringNs;

    static void reset() {
        measuringNs = 0;
    }

    /** The heap in use after a full collection, bytes (time not counted). */
    static long usedAfterGc() {
        long t = System.nanoTime();
        System.gc();
        long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        measuringNs += System.nanoTime() - t;
        return used;
    }

    /** Resident memory of this process (VmRSS), KiB; -1 if unreadable. */
    static long rssKb() {
        try {
            for (String l : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status")))
                if (l.startsWith("VmRSS:")) return Long.parseLong(l.substring(6).replace("kB", "").trim());
        } catch (java.io.IOException e) {
            return -1;
        }
        return -1;
    }
}
