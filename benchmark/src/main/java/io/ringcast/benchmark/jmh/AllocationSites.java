package io.ringcast.benchmark.jmh;

import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Sums the allocations of a JFR recording by thread and by call site, to say where a benchmark
 * allocates. Meant for a recording made with TLABs off ({@code -XX:-UseTLAB}), where every
 * allocation is a {@code jdk.ObjectAllocationOutsideTLAB} event with its stack: exact, not sampled
 * (and slow, so only the attribution is meaningful, never the time). {@code scripts/bench-jmh.sh
 * --alloc-profile} makes such a recording and runs this.
 *
 * <p>Usage: {@code java -cp ringcast-bench.jar io.ringcast.benchmark.jmh.AllocationSites RECORDING.jfr [FRAMES [SITES]]}
 */
public final class AllocationSites {
    private AllocationSites() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1) {
            System.err.println("usage: AllocationSites RECORDING.jfr [FRAMES [SITES]]");
            System.exit(2);
        }
        int frames = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int sites = args.length > 2 ? Integer.parseInt(args[2]) : 25;
        Map<String, long[]> byThread = new HashMap<>();
        Map<String, long[]> bySite = new HashMap<>();
        try (RecordingFile recording = new RecordingFile(Path.of(args[0]))) {
            while (recording.hasMoreEvents()) {
                RecordedEvent e = recording.readEvent();
                String type = e.getEventType().getName();
                long bytes;
                if (type.equals("jdk.ObjectAllocationOutsideTLAB") || type.equals("jdk.ObjectAllocationInNewTLAB")) {
                    bytes = e.getLong("allocationSize");
                } else if (type.equals("jdk.ObjectAllocationSample")) {
                    bytes = e.getLong("weight");
                } else {
                    continue;
                }
                String thread = threadName(e.getThread());
                RecordedClass objectClass = e.getClass("objectClass");
                String site = thread + " | " + objectClass.getName() + " | " + stack(e.getStackTrace(), frames);
                add(byThread, thread, bytes);
                add(bySite, site, bytes);
            }
        }
        System.out.println("bytes, objects, thread");
        print(byThread, Integer.MAX_VALUE);
        System.out.println();
        System.out.println("bytes, objects, thread | class | allocating frames, innermost first");
        print(bySite, sites);
    }

    /** JMH names its worker after the benchmark; one name for all of them. */
    private static String threadName(RecordedThread t) {
        String name = t == null || t.getJavaName() == null ? "?" : t.getJavaName();
        return name.contains("-jmh-worker-") ? "jmh-worker (benchmark thread)" : name;
    }

    private static String stack(RecordedStackTrace stack, int frames) {
        if (stack == null) {
            return "(no stack)";
        }
        StringBuilder s = new StringBuilder();
        List<RecordedFrame> all = stack.getFrames();
        for (int i = 0; i < Math.min(frames, all.size()); i++) {
            RecordedMethod m = all.get(i).getMethod();
            String type = m.getType().getName();
            s.append(i == 0 ? "" : " < ").append(type.substring(type.lastIndexOf('.') + 1)).append('.')
                    .append(m.getName()).append(':').append(all.get(i).getLineNumber());
        }
        return s.toString();
    }

    private static void add(Map<String, long[]> sums, String key, long bytes) {
        long[] sum = sums.computeIfAbsent(key, k -> new long[2]);
        sum[0] += bytes;
        sum[1]++;
    }

    private static void print(Map<String, long[]> sums, int limit) {
        sums.entrySet().stream()
                .sorted((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]))
                .limit(limit)
                .forEach(e -> System.out.println(e.getValue()[0] + " B, " + e.getValue()[1] + ", " + e.getKey()));
    }
}
