package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

/** A stop waits for the node's threads even when interrupted, and keeps the interrupt for its caller. */
@Timeout(20)
class StoppingThreadsTest {

    @Test
    void anInterruptedStopStillWaitsForTheThreadAndKeepsTheInterrupt() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        Thread worker = new Thread(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "stopping-threads-test");
        worker.start();
        Thread stopper = Thread.currentThread();
        Thread releaser = new Thread(() -> {
            stopper.interrupt(); // interrupts the join below, which must go on waiting
            release.countDown();
        });
        Thread.currentThread().interrupt(); // already interrupted when the stop begins
        releaser.start();

        StoppingThreads.join(worker);

        assertThat(worker.isAlive()).as("joined though interrupted").isFalse();
        assertThat(Thread.interrupted()).as("the interrupt is kept for the caller").isTrue();
        releaser.join();
    }

    @Test
    void aThreadThatDoesNotEndIsGivenUpAfterTheTimeout() throws InterruptedException {
        CountDownLatch never = new CountDownLatch(1);
        Thread stuck = new Thread(() -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "stopping-threads-stuck");
        stuck.start();
        long startNs = System.nanoTime();

        StoppingThreads.join(stuck);

        long waitedMs = (System.nanoTime() - startNs) / 1_000_000;
        assertThat(waitedMs).isBetween(StoppingThreads.JOIN_TIMEOUT_MS - 50, StoppingThreads.JOIN_TIMEOUT_MS + 5_000);
        assertThat(stuck.isAlive()).isTrue();
        never.countDown();
        stuck.join();
    }
}
