// Measures one run of a benchmark inside the JVM: its time (System.nanoTime,
// monotonic) and the collections it caused. JMX listeners are installed
// before the first run; begin() snapshots every collector's count and time
// just before the reported run, and report() prints deltas over that run:
//   TIME <ms>
//   RESULT {"check", "collections", "gc_ms", "pause_*_us"}
// gc_ms is the change of GarbageCollectorMXBean.getCollectionTime() (whole
// milliseconds as the JVM accounts them); pauses are the durations of that
// run's collections from GC notifications (whole milliseconds).
//
// Warm-up: -Dmosaic.warmup=N runs the benchmark N times before the reported
// run, in the same JVM (default 0: the reported run is the first).
import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

final class Pauses {
    /** A collection seen by the listener: its collector, its number there, its duration. */
    record Gc(String collector, long id, long durationMs) {}

    static final List<Gc> seen = Collections.synchronizedList(new ArrayList<>());
    /** Every GC notification received (pauses or not), to wait for late ones. */
    static final AtomicLong notified = new AtomicLong();
    static final Map<String, Long> idsAtBegin = new HashMap<>();
    static long countAtBegin, timeAtBegin, startNs;

    /** Installs the listeners; call once, before any run. */
    static void install() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            ((NotificationEmitter) gc).addNotificationListener((n, h) -> {
                if (!n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) return;
                GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
                notified.incrementAndGet();
                // Concurrent cycles (G1's) are not pauses.
                if (!info.getGcAction().contains("end of")) return;
                if (info.getGcCause().contains("Concurrent")) return;
                seen.add(new Gc(info.getGcName(), info.getGcInfo().getId(), info.getGcInfo().getDuration()));
            }, null, null);
        }
    }

    static int warmups() { return Integer.getInteger("mosaic.warmup", 0); }

    /** Total collections so far, all collectors. */
    static long collections() {
        long count = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
            count += Math.max(0, gc.getCollectionCount());
        return count;
    }

    /** Waits (at most a second) for the notifications of every collection so far. */
    static void settle() {
        long deadline = System.nanoTime() + 1_000_000_000L;
        while (notified.get() < collections() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Call just before the reported run; starts its clock. */
    static void begin() {
        settle();
        countAtBegin = 0;
        timeAtBegin = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            idsAtBegin.put(gc.getName(), Math.max(0, gc.getCollectionCount()));
            countAtBegin += Math.max(0, gc.getCollectionCount());
            timeAtBegin += Math.max(0, gc.getCollectionTime());
        }
        startNs = System.nanoTime();
    }

    /** Call right after the reported run: prints TIME and RESULT. */
    static void report(long check) {
        long elapsedNs = System.nanoTime() - startNs;
        System.out.printf("TIME %.3f%n", elapsedNs / 1e6);
        settle();
        long count = -countAtBegin, timeMs = -timeAtBegin;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            timeMs += Math.max(0, gc.getCollectionTime());
        }
        List<Long> d = new ArrayList<>();
        synchronized (seen) {
            for (Gc g : seen)
                if (g.id() > idsAtBegin.getOrDefault(g.collector(), Long.MAX_VALUE)) d.add(g.durationMs());
        }
        StringBuilder sb = new StringBuilder("RESULT {\"check\": " + check + ", \"collections\": " + count
                + ", \"gc_ms\": " + timeMs + ", \"warmup_runs\": " + warmups());
        if (!d.isEmpty()) {
            Collections.sort(d);
            sb.append(", \"pause_p50_us\": ").append(d.get(d.size() / 2) * 1000)
              .append(", \"pause_p99_us\": ").append(d.get((int) (d.size() * 0.99)) * 1000)
              .append(", \"pause_max_us\": ").append(d.get(d.size() - 1) * 1000);
        }
        System.out.println(sb.append("}"));
    }
}
