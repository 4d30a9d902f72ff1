package io.ringcast.benchmark.load;

/**
 * How the load generator's subscribers connect ({@code --subscriber-client}). Publishers always use
 * the Java client (acks, retries, publisher ids).
 */
enum SubscriberClient {
    /**
     * A raw WebSocket per subscriber ({@link LeanSubscriber}) that reads each value's header in place
     * from the frame: nothing allocated per update, so the generator measures the server rather than
     * itself. Cannot apply deltas, does not offer compression, does not resume: a delta or a lost
     * connection fails the run.
     */
    LEAN,
    /**
     * The Java client ({@code RingcastClient}), as a real Java user subscribes: a {@code byte[]} copy
     * of each value to the listener, deltas applied, compression offered, reconnect and resume.
     */
    JAVA
}
