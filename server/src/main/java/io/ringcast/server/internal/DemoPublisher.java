package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The built-in publisher behind the demo page ({@code demo.enabled}): simulated FX quotes
 * {@code {"bid":1.08421,"ask":1.08433,"ts":1763856000123}} under {@code demo/fx/<PAIR>}, where
 * {@code ts} is the wall clock at publish, so a page on the same machine can show end-to-end latency.
 *
 * <p>Threads: everything here runs on its own thread {@code ringcast-demo}, which meets the rest
 * of the node only through the inbound ring ({@link SequencerProxy#tryPublish}), as a session's
 * publishes do (without an ack). When the
 * ring is full the tick's remaining updates are skipped, not waited for: demo traffic never holds
 * back real publishers.
 */
final class DemoPublisher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DemoPublisher.class);
    static final String PREFIX = "demo/fx/";
    /** Units of US dollars per currency, roughly; crosses are derived from these. */
    private static final String[] CURRENCIES = {
            "EUR", "USD", "GBP", "JPY", "CHF", "AUD", "NZD", "CAD", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF",
            "TRY", "ZAR", "MXN", "BRL", "CNH", "HKD", "SGD", "KRW", "INR", "IDR", "THB", "TWD", "ILS", "AED",
            "SAR", "CLP", "COP", "PHP"};
    private static final double[] USD_PER_UNIT = {
            1.0842, 1.0, 1.2655, 0.00667, 1.1312, 0.6583, 0.6021, 0.7358, 0.0952, 0.0937, 0.1453, 0.2512,
            0.0431, 0.00276, 0.0291, 0.0547, 0.0588, 0.1995, 0.1381, 0.1281, 0.7441, 0.00075, 0.01198,
            0.0000637, 0.0281, 0.0312, 0.2703, 0.2723, 0.2666, 0.00106, 0.000256, 0.01779};
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final JsonFactory JSON = new JsonFactory();
    /** The demo does not retry: a quote refused during a failover is followed by the next. */
    private static final ClusterNode.PublishCallback IGNORE_OUTCOME = (outcome, sequence, firstPath) -> { };

    private final SequencerProxy inbound;
    /** Makes an instrument's next quote once a slot is claimed; one method reference, not one per quote. */
    private final IntFunction<ByteBuf> nextQuote = this::nextQuote;
    /** In a cluster the quotes go through the Raft group's log like any publish; else null. */
    private final ClusterNode cluster;
    private final ByteBufAllocator alloc;
    private final String[] paths;
    private final String[][] segments;
    private final double[] mids;
    private final int updatesPerSecond;
    private final SplittableRandom random = new SplittableRandom();
    private final Thread thread;
    private volatile boolean running = true;
    private long skipped;

    DemoPublisher(ServerConfig.Demo config, SequencerProxy inbound, ByteBufAllocator alloc,
                  ClusterNode cluster) {
        this.inbound = inbound;
        this.cluster = cluster;
        this.alloc = alloc;
        this.updatesPerSecond = config.updatesPerSecond();
        int n = config.instruments();
        paths = new String[n];
        segments = new String[n][];
        mids = new double[n];
        // pairs in a fixed order, majors first: instrument i is the same on every run
        int i = 0;
        for (int distance = 1; distance < CURRENCIES.length && i < n; distance++) {
            for (int base = 0; base < CURRENCIES.length && i < n; base++) {
                int quote = (base + distance) % CURRENCIES.length;
                String pair = CURRENCIES[base] + CURRENCIES[quote];
                paths[i] = PREFIX + pair;
                segments[i] = new String[] {"demo", "fx", pair};
                mids[i] = USD_PER_UNIT[base] / USD_PER_UNIT[quote];
                i++;
            }
        }
        thread = new Thread(this::run, "ringcast-demo");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
        log.info("demo publisher: {} instruments under {}, {} updates/s", paths.length, PREFIX, updatesPerSecond);
    }

    private void run() {
        long next = System.nanoTime();
        double owed = 0; // fractional updates carried to the next tick, so low rates still tick
        while (running) {
            owed += updatesPerSecond * (TICK_NANOS / 1e9);
            int due = (int) owed;
            owed -= due;
            for (int k = 0; k < due && running; k++) {
                if (!publish(random.nextInt(paths.length))) {
                    skipped += due - k;
                    break;
                }
            }
            next += TICK_NANOS;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            } else if (wait < -TimeUnit.SECONDS.toNanos(1)) {
                next = System.nanoTime(); // fell far behind (a paused VM): do not burst to catch up
            }
        }
    }

    /** One quote to the inbound ring; false when the ring is full. */
    private boolean publish(int instrument) {
        if (cluster != null) {
            if (!cluster.hasRoom()) {
                return false; // skipped, as on a full ring
            }
            ByteBuf value = nextQuote(instrument);
            byte[] bytes = new byte[value.readableBytes()];
            value.readBytes(bytes);
            value.release();
            return cluster.publish(null, 0, 0, 0, 0, false, paths[instrument], bytes, IGNORE_OUTCOME);
        }
        return inbound.tryPublish(paths[instrument], segments[instrument], nextQuote, instrument);
    }

    /** The instrument's next quote: its mid moves a little, at random. */
    private ByteBuf nextQuote(int instrument) {
        double mid = mids[instrument] * (1 + random.nextGaussian() * 0.00005);
        mids[instrument] = mid;
        return quote(mid);
    }

    private ByteBuf quote(double mid) {
        double halfSpread = mid * 0.00006; // the spread stays wider than the rounding below
        ByteBuf value = alloc.buffer(64);
        try (JsonGenerator json = JSON.createGenerator((OutputStream) new ByteBufOutputStream(value))) {
            json.writeStartObject();
            json.writeNumberField("bid", round(mid - halfSpread));
            json.writeNumberField("ask", round(mid + halfSpread));
            json.writeNumberField("ts", System.currentTimeMillis());
            json.writeEndObject();
        } catch (IOException e) {
            value.release();
            throw new IllegalStateException("cannot encode a demo quote", e);
        }
        return value;
    }

    /** Six significant digits, as quotes are shown (1.08421, 149.932). */
    private static double round(double price) {
        double scale = Math.pow(10, 5 - (int) Math.floor(Math.log10(price)));
        return Math.round(price * scale) / scale;
    }

    /** Stops the thread and waits for it, so nothing is published into a stopping sequencer. */
    @Override
    public void close() {
        running = false;
        StoppingThreads.join(thread);
        if (skipped > 0) {
            log.info("demo publisher stopped; {} updates skipped while the inbound ring was full", skipped);
        }
    }
}
