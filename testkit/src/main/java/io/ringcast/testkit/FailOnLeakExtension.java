package io.ringcast.testkit;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Makes a Netty buffer leak fail the build. Netty's detector only logs {@code LEAK:}; this
 * extension, registered for every test class of every module (JUnit extension auto-detection,
 * switched on in the parent pom), installs a detector that also records each report, and after
 * each test class collects garbage and fails the class if anything was reported.
 *
 * <p>The level is set by {@code -Dio.netty.leakDetection.level} (paranoid in our test JVMs); a
 * test that must run at a sampled level for speed uses {@link #withLevel}.
 */
public final class FailOnLeakExtension implements AfterAllCallback {
    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();

    static {
        // must run before Netty creates its first buffer detector: JUnit loads extensions before test classes
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty buffer leak(s) reported during or before "
                    + context.getDisplayName() + ":\n" + String.join("\n----\n", leaks));
        }
    }

    /**
     * Runs {@code body} with Netty leak detection at {@code level}, then restores the level. For a
     * test whose scale makes paranoid tracking (a stack trace per buffer access) impractical.
     */
    public static void withLevel(ResourceLeakDetector.Level level, ThrowingRunnable body) throws Exception {
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(level);
        try {
            body.run();
        } finally {
            ResourceLeakDetector.setLevel(before);
        }
    }

    /** A test body that may throw. */
    @FunctionalInterface
    public interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Collects garbage and lets the detector poll its queue, then returns and clears the leaks seen. */
    static List<String> collectLeaks() {
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID); // every track() polls for leaks
        try {
            for (int i = 0; i < 3; i++) {
                System.gc();
                // tracking a fresh buffer is what makes the detector drain its queue of collected ones
                PooledByteBufAllocator.DEFAULT.buffer(1).release();
            }
        } finally {
            ResourceLeakDetector.setLevel(before);
        }
        List<String> out = new ArrayList<>();
        for (String s; (s = LEAKS.poll()) != null; ) {
            out.add(s);
        }
        return out;
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        // abstract in Netty's factory, so it must be implemented though deprecated; Netty calls the other one
        @SuppressWarnings("deprecation")
        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                   long maxActive) {
            return new RecordingDetector<>(resource, samplingInterval);
        }

        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval) {
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            LEAKS.add("LEAK: " + resourceType + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            LEAKS.add("LEAK: " + resourceType + " (no access records at this level)");
            super.reportUntracedLeak(resourceType);
        }
    }
}
