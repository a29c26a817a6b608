// Collects every GC's duration through JMX notifications and prints the
// RESULT line (count, total GC time, pause percentiles).
import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

final class Pauses {
    static final List<Long> durationsMs = Collections.synchronizedList(new ArrayList<>());

    static void install() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            ((NotificationEmitter) gc).addNotificationListener((n, h) -> {
                if (!n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) return;
                GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
                // Concurrent cycles (G1's) are not pauses.
                if (!info.getGcAction().contains("end of")) return;
                if (info.getGcCause().contains("Concurrent")) return;
                durationsMs.add(info.getGcInfo().getDuration());
            }, null, null);
        }
    }

    static void report(long check) {
        long count = 0, timeMs = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            timeMs += Math.max(0, gc.getCollectionTime());
        }
        StringBuilder sb = new StringBuilder("RESULT {\"check\": " + check + ", \"collections\": " + count + ", \"gc_ms\": " + timeMs);
        List<Long> d;
        synchronized (durationsMs) { d = new ArrayList<>(durationsMs); }
        if (!d.isEmpty()) {
            Collections.sort(d);
            sb.append(", \"pause_p50_us\": ").append(d.get(d.size() / 2) * 1000)
              .append(", \"pause_p99_us\": ").append(d.get((int) (d.size() * 0.99)) * 1000)
              .append(", \"pause_max_us\": ").append(d.get(d.size() - 1) * 1000);
        }
        System.out.println(sb.append("}"));
    }
}
