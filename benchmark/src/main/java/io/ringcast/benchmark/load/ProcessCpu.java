package io.ringcast.benchmark.load;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * The CPU time this JVM has used, from {@code com.sun.management.OperatingSystemMXBean}: the
 * generator's own cost, so a reader can tell whether the generator limited the result. Any thread.
 */
final class ProcessCpu {
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
}
