package io.ringcast.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.fail;

/** Listeners that record what they get, and a wait on a condition. */
final class Recorders {
    private Recorders() {
    }

    /** Waits until {@code condition} holds, failing after 10 s. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what);
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** Records updates as {@code KIND topic #seq text} lines, and errors. */
    static final class Updates implements UpdateListener {
        final List<String> lines = new CopyOnWriteArrayList<>();
        final List<RingcastException> errors = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();

        @Override
        public void onUpdate(Update update) {
            threads.add(Thread.currentThread().getName());
            lines.add(update.kind() + " " + update.topic() + " #" + update.sequence() + " " + update.text());
        }

        @Override
        public void onError(RingcastException error) {
            errors.add(error);
        }

        void awaitCount(int n) {
            await(n + " updates, have " + lines, () -> lines.size() >= n);
        }
    }

    /** Records session starts and ends as lines. */
    static final class Connections implements ConnectionListener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final List<RingcastException> reasons = new CopyOnWriteArrayList<>();
        volatile Runnable onDisconnect = () -> { };

        @Override
        public void onConnected(String address, String sessionId) {
            events.add("connected " + address + " " + sessionId);
        }

        @Override
        public void onDisconnected(String address, RingcastException reasonOrNull, int webSocketCloseCode) {
            events.add("disconnected " + address + " " + webSocketCloseCode);
            if (reasonOrNull != null) {
                reasons.add(reasonOrNull);
            }
            onDisconnect.run();
        }

        long connects() {
            return events.stream().filter(e -> e.startsWith("connected")).count();
        }
    }
}
