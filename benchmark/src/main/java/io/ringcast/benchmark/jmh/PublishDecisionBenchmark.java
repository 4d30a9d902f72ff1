package io.ringcast.benchmark.jmh;

import io.ringcast.log.PublishResult;
import io.ringcast.log.PublisherLedgers;
import io.ringcast.log.PublishingSessions;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What the one publish decision costs per publish of a publisher (a client that gives a publisher
 * id): the ledger looked up, {@code screen}, {@code recordApplied}, as a single node's sequencer and
 * a group's state machine ask it for every such publish. Publishers take turns, each publish a new
 * correlation id in its session's order, topics from a set of 100; the ledgers are warm (a
 * million publishes before, so one or five publishers' windows are full, 10,000 publishers' hold
 * 100 each) and within their bounds, so nothing is forgotten.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 10, time = 1)
@Fork(1)
public class PublishDecisionBenchmark {
    /** Publishers taking turns: one busy publisher, a few, or many. */
    @Param({"1", "5", "10000"})
    public int publishers;

    private PublisherLedgers ledgers;
    private final String[] topics = new String[100];
    private long[] sessions;
    private long[] places;
    private int[] nextIds;
    private int turn;
    private long sequence;

    @Setup
    public void setUp() {
        ledgers = new PublisherLedgers(Math.max(16_384, publishers), Math.max(8_192, publishers));
        for (int t = 0; t < topics.length; t++) {
            topics[t] = "prices/fx/" + t;
        }
        sessions = new long[publishers];
        places = new long[publishers];
        nextIds = new int[publishers];
        for (int p = 0; p < publishers; p++) {
            sessions[p] = PublishingSessions.ordered(1);
        }
        for (int i = 0; i < 1_000_000; i++) {
            decide();
        }
    }

    @Benchmark
    public long decide() {
        int p = turn;
        turn = p + 1 == publishers ? 0 : p + 1;
        int id = nextIds[p]++;
        String topic = topics[id % topics.length];
        PublisherLedgers.Ledger ledger = ledgers.ledgerOf("anonymous", p + 1L);
        PublishResult decided = ledger.screen(sessions[p], ++places[p], id, false, topic);
        if (decided != null) {
            throw new IllegalStateException("a new publish in order was decided " + decided);
        }
        ledger.recordApplied(sessions[p], id, topic, ++sequence, false);
        return sequence;
    }
}
