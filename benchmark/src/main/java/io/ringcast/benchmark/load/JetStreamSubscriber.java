package io.ringcast.benchmark.load;

import io.nats.client.Connection;
import io.nats.client.Consumer;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.MessageHandler;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import io.ringcast.client.UpdateKind;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A subscriber of a {@code --target jetstream} run: its own connection (the official Java client)
 * and one ordered push consumer of the whole stream ({@code bench.>}) from its newest message on,
 * the client's own way to read a stream in order without acks: an ephemeral consumer on one server
 * that the client replaces, from the stream sequence after the last it received, when a message is
 * missing or nothing (not even the idle heartbeat of {@link #IDLE_HEARTBEAT}) came for three
 * heartbeats: so it resumes when the consumer's server or its own dies.
 *
 * <p>For each message it reads the value's header from the client's copy ({@link ValueHeader}, as
 * the Java-client subscribers of Ringcast runs do) and hands it to its {@link SubscriberTally}, with
 * the stream sequence as the server's sequence: the same checks of lost, duplicated and reordered
 * values, and the same latency from the intended send time. A value whose header names another
 * topic than its subject fails the subscriber. The stream's sequence counts every subject, so the
 * tally's {@code sequenceGaps} (other subjects' messages between two of one topic) mean nothing here.
 *
 * <p>Threads: {@link #onMessage} on the connection's dispatcher thread; the {@link ErrorListener}
 * callbacks on the client's callback thread; both hold the tally's lock, so the tally has one writer
 * at a time and {@link #awaitQuiet} orders every write before the run reads it. {@link #subscribe}
 * from the run's thread, once.
 */
final class JetStreamSubscriber implements MessageHandler, ErrorListener {
    /**
     * The server sends a heartbeat after this long without a message; the client replaces the
     * consumer after three missed (the client's default is 5 s, so 15 s before it acts).
     */
    static final Duration IDLE_HEARTBEAT = Duration.ofSeconds(1);

    private final int index;
    private final int runId;
    private final String[] subjects;
    private final SubscriberTally tally;
    /** The header of the message {@link #onMessage} reads; guarded by the tally's lock, as the tally. */
    private final ValueHeader header;

    JetStreamSubscriber(int index, LoadSpec spec, int runId, String[] subjects, SubscriberTally tally) {
        this.index = index;
        this.runId = runId;
        this.subjects = subjects;
        this.tally = tally;
        this.header = new ValueHeader(spec.valueFormat());
    }

    /**
     * A first creation that timed out (the client waits 2 s for the JetStream API: a server busy with a
     * hundred consumers' creations, or one of a stream just made, can miss it) is asked again, at
     * most this many times in all. The client's own replacements of the consumer keep its 2 s: a
     * longer wait would only slow them while the stream has no leader.
     */
    static final int CREATE_TRIES = 5;

    /**
     * Creates the ordered consumer on {@code connection} (made with this as its error listener);
     * returns once it exists.
     */
    JetStreamSubscription subscribe(Connection connection) throws LoadException, InterruptedException {
        Dispatcher dispatcher = connection.createDispatcher();
        PushSubscribeOptions options = PushSubscribeOptions.builder()
                .stream(JetStreamStream.NAME)
                .ordered(true)
                .configuration(ConsumerConfiguration.builder()
                        .deliverPolicy(DeliverPolicy.New) // the stream was purged: everything from now on is this run's
                        .idleHeartbeat(IDLE_HEARTBEAT)
                        .build())
                .build();
        for (int tries = 1; ; tries++) {
            try {
                return connection.jetStream().subscribe(JetStreamStream.ALL_SUBJECTS, dispatcher, this, false, options);
            } catch (IOException | JetStreamApiException | RuntimeException e) {
                // a timeout is an IOException: the server may have made the consumer, unseen; the next is another
                if (!(e instanceof IOException) || tries == CREATE_TRIES) {
                    throw new LoadException("subscriber " + index + ": no ordered consumer of " + JetStreamStream.NAME
                            + " after " + tries + " tries: " + e.getMessage(), e);
                }
                TimeUnit.MILLISECONDS.sleep(500); // before asking again: the server is busy
            }
        }
    }

    @Override
    public void onMessage(Message msg) {
        long receivedNs = System.nanoTime();
        synchronized (tally) {
            if (tally.stopped()) {
                return;
            }
            if (!header.read(msg.getData()) || header.runId != runId) {
                tally.foreignValue();
                return;
            }
            int t = header.topicIndex;
            if (t >= 0 && t < subjects.length && !subjects[t].equals(msg.getSubject())) {
                tally.fail("a value of topic " + t + " on subject " + msg.getSubject());
                return;
            }
            tally.onValue(t, header.counter, msg.metaData().streamSequence(), UpdateKind.UPDATE, receivedNs,
                    header.intendedSendNs);
        }
    }

    @Override
    public void heartbeatAlarm(Connection conn, JetStreamSubscription sub, long lastStreamSequence,
                               long lastConsumerSequence) {
        noteError("nothing for " + IDLE_HEARTBEAT.toMillis() * 3 + " ms: a new ordered consumer from stream sequence "
                + (lastStreamSequence + 1));
    }

    @Override
    public void errorOccurred(Connection conn, String error) {
        noteError(error);
    }

    @Override
    public void exceptionOccurred(Connection conn, Exception exp) {
        noteError(exp.toString());
    }

    @Override
    public void slowConsumerDetected(Connection conn, Consumer consumer) {
        noteError("slow consumer: the client dropped messages it could not dispatch in time");
    }

    private void noteError(String message) {
        synchronized (tally) {
            tally.noteError(message);
        }
    }

    /** After the connection closed: a message still being handled is done, and its writes are seen. Any thread. */
    void awaitQuiet() {
        // empty: taking the lock is the point, after the last writer's release of it
        synchronized (tally) {
        }
    }
}
