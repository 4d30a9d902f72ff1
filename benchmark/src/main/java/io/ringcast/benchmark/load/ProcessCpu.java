package io.ringcast.benchmark.load;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * CPU time used by processes: this JVM's, from {@code com.sun.management.OperatingSystemMXBean}
 * (the generator's own cost, so a reader can tell whether the generator limited the result), and
 * other processes' on Linux from {@code /proc/<pid>/stat} ({@code --server-pids}: the servers'
 * cost per delivery). Any thread.
 */
final class ProcessCpu {
    /** {@code /proc/<pid>/stat} counts in clock ticks of 10 ms ({@code getconf CLK_TCK} is 100 on Linux). */
    static final long NS_PER_TICK = 10_000_000L;

    private ProcessCpu() {
    }

    /** CPU nanoseconds used by the process so far (every thread), or -1 when the JVM does not say. */
    static long cpuTimeNs() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * User plus system CPU nanoseconds used so far by the processes {@code pids} together, or -1
     * when any of them cannot be read (not Linux, or a process gone: a killed node).
     */
    static long cpuTimeNs(List<Long> pids) {
        long ticks = sumOverProcesses(pids, "stat", ProcessCpu::ticksOf);
        return ticks < 0 ? -1 : ticks * NS_PER_TICK;
    }

    /**
     * The peak resident memory ({@code VmHWM} of {@code /proc/<pid>/status}) of the processes
     * {@code pids} together, in bytes, or -1 when any of them cannot be read.
     */
    static long peakRssBytes(List<Long> pids) {
        long kb = sumOverProcesses(pids, "status", ProcessCpu::peakRssKbOf);
        return kb < 0 ? -1 : kb * 1024;
    }

    /**
     * The resident memory now ({@code VmRSS} of {@code /proc/<pid>/status}) of the processes
     * {@code pids} together, in bytes, or -1 when any of them cannot be read.
     */
    static long rssBytes(List<Long> pids) {
        long kb = sumOverProcesses(pids, "status", status -> kbOf(status, "VmRSS:"));
        return kb < 0 ? -1 : kb * 1024;
    }

    /** The sum of what {@code read} makes of each process's {@code /proc/<pid>/<file>}, or -1 if one cannot be read. */
    private static long sumOverProcesses(List<Long> pids, String file, ToLongFunction<String> read) {
        long total = 0;
        for (long pid : pids) {
            try {
                total += read.applyAsLong(Files.readString(Path.of("/proc", Long.toString(pid), file), StandardCharsets.US_ASCII));
            } catch (IOException | RuntimeException e) {
                return -1;
            }
        }
        return total;
    }

    /** The {@code VmHWM:} line of a {@code /proc/<pid>/status} text, in kB. */
    static long peakRssKbOf(String status) {
        return kbOf(status, "VmHWM:");
    }

    /** The line starting with {@code key} (such as {@code VmRSS:}) of a {@code /proc/<pid>/status} text, in kB. */
    static long kbOf(String status, String key) {
        for (String line : status.split("\n")) {
            if (line.startsWith(key)) {
                return Long.parseLong(line.substring(key.length()).replace("kB", "").trim());
            }
        }
        throw new IllegalArgumentException("no " + key + " line");
    }

    /**
     * utime + stime (fields 14 and 15) of a {@code /proc/<pid>/stat} line. The second field, the
     * command name in parentheses, may hold spaces and parentheses itself, so the fields are
     * counted from the last ')'.
     */
    static long ticksOf(String statLine) {
        String[] after = statLine.substring(statLine.lastIndexOf(')') + 2).trim().split(" ");
        // after[0] is field 3 (state), so field n is after[n - 3]
        return Long.parseLong(after[14 - 3]) + Long.parseLong(after[15 - 3]);
    }
}
