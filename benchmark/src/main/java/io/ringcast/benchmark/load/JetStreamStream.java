package io.ringcast.benchmark.load;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.ClusterInfo;
import io.nats.client.api.Replica;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The one JetStream stream a {@code --target jetstream} run publishes to, and the names in it: topic
 * {@code bench/t0042} is the subject {@code bench.t0042}, and the stream {@value #NAME} holds every
 * {@code bench.>} subject in files, with one replica per server up to JetStream's five
 * ({@link #replicasFor}). Publishes are acked once a majority of the replicas stored them (JetStream's
 * own rule; 2.9 does not fsync each write). {@link #prepare} creates the stream, or brings one left by
 * an earlier run to these settings, and empties it, so every run starts on an empty store; it then
 * waits until the stream has a leader and every replica is current. Stateless.
 */
final class JetStreamStream {
    /** The stream's name; {@code scripts/lib/jetstream.sh} finds its leader by it. */
    static final String NAME = "RINGCAST_BENCH";
    /** Every topic's subject: the stream's subjects, and every subscriber's filter. */
    static final String ALL_SUBJECTS = "bench.>";
    /** JetStream replicates a stream on at most five servers. */
    static final int MAX_REPLICAS = 5;
    /**
     * Values kept per subject: {@code history.length} of the Ringcast nodes' configs
     * ({@code config/cluster}), so both systems keep the same per topic. A run starts empty and
     * publishes fewer per topic than this ({@code 5,000/s x 70 s / 100 topics}), so nothing is removed
     * while it runs.
     */
    static final long MESSAGES_PER_SUBJECT = 4096;
    /**
     * How long the stream remembers a {@code Nats-Msg-Id} to drop a second publish of it: JetStream's
     * default, well past {@link JetStreamPublication#RETRY_BUDGET_MS}, so a retry is never stored twice.
     */
    static final Duration DUPLICATE_WINDOW = Duration.ofMinutes(2);
    /** JetStream's error code for a stream that does not exist. */
    private static final int STREAM_NOT_FOUND = 10059;
    private static final long LEADER_TIMEOUT_MS = 60_000;
    /** How long {@link #prepare} waits for every replica to be current before a leader alone will do. */
    private static final long CATCH_UP_MS = 10_000;

    private JetStreamStream() {
    }

    /** The subject of every topic of {@code spec}, by topic index: its dotted name, {@code bench.t0042}. */
    static String[] subjects(LoadSpec spec) {
        return spec.dottedTopicNames();
    }

    /**
     * The {@code Nats-Msg-Id} of a value: the run, the topic and its counter name it once (one publisher
     * owns each topic), so every try of one publish carries the same id and the stream stores it once.
     */
    static String messageId(int runId, int topic, long counter) {
        return runId + "-" + topic + "-" + counter;
    }

    /** One replica per server, at most {@link #MAX_REPLICAS}. */
    static int replicasFor(LoadSpec spec) {
        return Math.min(spec.servers().size(), MAX_REPLICAS);
    }

    /** The stream's settings for {@code replicas} replicas. */
    static StreamConfiguration configuration(int replicas) {
        return StreamConfiguration.builder()
                .name(NAME)
                .subjects(ALL_SUBJECTS)
                .storageType(StorageType.File)
                .replicas(replicas)
                .maxMessagesPerSubject(MESSAGES_PER_SUBJECT)
                .duplicateWindow(DUPLICATE_WINDOW)
                .build();
    }

    /**
     * What differs between the settings of a stream that exists and {@code wanted}, in words (empty
     * when nothing this class sets does): a storage type cannot be changed, anything else is updated.
     */
    static List<String> differences(StreamConfiguration existing, StreamConfiguration wanted) {
        List<String> differences = new java.util.ArrayList<>();
        if (existing.getStorageType() != wanted.getStorageType()) {
            differences.add("storage " + existing.getStorageType() + " instead of " + wanted.getStorageType());
        }
        if (!existing.getSubjects().equals(wanted.getSubjects())) {
            differences.add("subjects " + existing.getSubjects() + " instead of " + wanted.getSubjects());
        }
        if (existing.getReplicas() != wanted.getReplicas()) {
            differences.add("replicas " + existing.getReplicas() + " instead of " + wanted.getReplicas());
        }
        if (existing.getMaxMsgsPerSubject() != wanted.getMaxMsgsPerSubject()) {
            differences.add("max messages per subject " + existing.getMaxMsgsPerSubject() + " instead of "
                    + wanted.getMaxMsgsPerSubject());
        }
        if (!existing.getDuplicateWindow().equals(wanted.getDuplicateWindow())) {
            differences.add("duplicate window " + existing.getDuplicateWindow() + " instead of "
                    + wanted.getDuplicateWindow());
        }
        return differences;
    }

    /**
     * Makes the stream ready for a run: created with {@link #configuration}, or updated to it, then
     * purged; returns once it has a leader, whose name it logs, and all its replicas are current (a
     * server that has not caught up yet answers its first consumers late).
     *
     * @throws LoadException when the stream cannot be made so (its storage type differs: delete it, or
     *                       the servers refuse), or is not ready after a minute
     */
    static void prepare(JetStreamManagement jsm, int replicas, PrintWriter log) throws LoadException, InterruptedException {
        StreamConfiguration wanted = configuration(replicas);
        try {
            StreamInfo info = null;
            try {
                info = jsm.getStreamInfo(NAME);
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() != STREAM_NOT_FOUND) {
                    throw e;
                }
            }
            if (info == null) {
                jsm.addStream(wanted);
                log.printf("  JetStream stream %s created: %s, file storage, replicas %d%n", NAME, ALL_SUBJECTS, replicas);
            } else {
                List<String> differences = differences(info.getConfiguration(), wanted);
                if (differences.stream().anyMatch(d -> d.startsWith("storage"))) {
                    throw new LoadException("JetStream stream " + NAME + " exists with " + differences
                            + ": a stream's storage cannot change; delete it (or the servers' store) first");
                }
                if (!differences.isEmpty()) {
                    jsm.updateStream(wanted);
                    log.printf("  JetStream stream %s updated: %s%n", NAME, differences);
                }
            }
            jsm.purgeStream(NAME);
            long startNs = System.nanoTime();
            long deadline = startNs + TimeUnit.MILLISECONDS.toNanos(LEADER_TIMEOUT_MS);
            for (;;) {
                StreamInfo now = jsm.getStreamInfo(NAME);
                ClusterInfo cluster = now.getClusterInfo();
                String leader = cluster == null ? null : cluster.getLeader();
                List<Replica> followers = cluster == null || cluster.getReplicas() == null ? List.of()
                        : cluster.getReplicas();
                long current = followers.stream().filter(r -> r.isCurrent() && !r.isOffline()).count();
                // one replica: nothing to elect (a server outside a cluster names no leader at all)
                boolean led = leader != null && !leader.isEmpty() || replicas == 1;
                // a server that is down (a kill before) never catches up: after a while, a leader is enough
                if (led && (current == replicas - 1 || System.nanoTime() - startNs > TimeUnit.MILLISECONDS.toNanos(
                        CATCH_UP_MS))) {
                    log.printf("  JetStream stream %s: purged, leader %s, %d of %d other replicas current%n", NAME,
                            leader == null || leader.isEmpty() ? "none (one server)" : leader, current, replicas - 1);
                    log.flush();
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new LoadException("JetStream stream " + NAME + " has no leader after " + LEADER_TIMEOUT_MS
                            + " ms");
                }
                TimeUnit.MILLISECONDS.sleep(100); // asking again: the servers tell no one when a leader is elected
            }
        } catch (IOException | JetStreamApiException e) {
            throw new LoadException("JetStream stream " + NAME + " could not be made ready: " + e.getMessage(), e);
        }
    }
}
