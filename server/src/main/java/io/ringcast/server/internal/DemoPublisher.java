package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.ringcast.cluster.ClusterNode;
import io.ringcast.server.config.ServerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The built-in publisher behind the demo page ({@code demo.enabled}): simulated FX quotes
 * {@code {"bid":1.08421,"ask":1.08433,"spread":0.00012,"ts":1763856000123}} under
 * {@code demo/fx/<PAIR>}, where {@code ts} is the wall clock at publish, so a page on the same
 * machine can show end-to-end latency.
 *
 * <p>Prices have about six significant digits: a quote's decimals are those of its mid (1.08421,
 * 149.932), so its last digit is a tenth of a pip, the pip being the unit of the fifth significant
 * digit (0.0001 for 1.08, 0.01 for 149.9). {@code spread} is {@code ask - bid}, exactly, with the
 * same decimals. Each instrument's spread wanders at random between 0.5 and 3 pips, so a filter such
 * as {@code spread < 0.0002} passes some pairs some of the time (those priced from 1 to 10 while
 * under 2 pips; cheaper pairs always, dearer ones never) and the demo page's filter panel sees pairs
 * come and go.
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
    /** The range of an instrument's spread, in pips. */
    private static final double MIN_SPREAD_PIPS = 0.5;
    private static final double MAX_SPREAD_PIPS = 3;
    /**
     * The spread's step per quote (standard deviation, pips): at a few quotes a second per
     * instrument, a spread near a filter's bound crosses it every few seconds.
     */
    private static final double SPREAD_STEP_PIPS = 0.15;
    /** The spread in plain decimals ({@code 0.00012}, not {@code 1.2E-4}): it is what people filter on. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN).build();
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
    /** Each instrument's spread in pips, from {@link #MIN_SPREAD_PIPS} to {@link #MAX_SPREAD_PIPS}. */
    private final double[] spreadPips;
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
        spreadPips = new double[n];
        // pairs in a fixed order, majors first: instrument i is the same on every run
        int i = 0;
        for (int distance = 1; distance < CURRENCIES.length && i < n; distance++) {
            for (int base = 0; base < CURRENCIES.length && i < n; base++) {
                int quote = (base + distance) % CURRENCIES.length;
                String pair = CURRENCIES[base] + CURRENCIES[quote];
                paths[i] = PREFIX + pair;
                segments[i] = new String[] {"demo", "fx", pair};
                mids[i] = USD_PER_UNIT[base] / USD_PER_UNIT[quote];
                spreadPips[i] = MIN_SPREAD_PIPS + random.nextDouble() * (MAX_SPREAD_PIPS - MIN_SPREAD_PIPS);
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

    /** The instrument's next quote: its mid and its spread move a little, at random. */
    private ByteBuf nextQuote(int instrument) {
        double mid = mids[instrument] * (1 + random.nextGaussian() * 0.00005);
        mids[instrument] = mid;
        double pips = reflect(spreadPips[instrument] + random.nextGaussian() * SPREAD_STEP_PIPS);
        spreadPips[instrument] = pips;
        return quote(mid, pips);
    }

    /** Back inside the spread's range by as much as it went out, so the walk does not stick to a bound. */
    private static double reflect(double pips) {
        if (pips < MIN_SPREAD_PIPS) {
            return Math.min(MAX_SPREAD_PIPS, 2 * MIN_SPREAD_PIPS - pips);
        }
        if (pips > MAX_SPREAD_PIPS) {
            return Math.max(MIN_SPREAD_PIPS, 2 * MAX_SPREAD_PIPS - pips);
        }
        return pips;
    }

    /**
     * Bid and ask around {@code mid}, {@code spreadPips} apart, to the tenth of a pip: counted in
     * those tenths so that {@code spread} is {@code ask - bid} to the digit, not a double's
     * approximation of it.
     */
    private ByteBuf quote(double mid, double spreadPips) {
        int decimals = 5 - (int) Math.floor(Math.log10(mid)); // six significant digits: 1.08421, 149.932
        double scale = Math.pow(10, decimals); // tenths of a pip per unit of price
        long spreadTenths = Math.round(spreadPips * 10); // at least 5: bid < ask whatever the rounding
        long bidTenths = Math.round(mid * scale - spreadTenths / 2.0);
        ByteBuf value = alloc.buffer(96);
        try (JsonGenerator json = JSON.createGenerator((OutputStream) new ByteBufOutputStream(value))) {
            json.writeStartObject();
            json.writeNumberField("bid", bidTenths / scale);
            json.writeNumberField("ask", (bidTenths + spreadTenths) / scale);
            json.writeNumberField("spread", BigDecimal.valueOf(spreadTenths, decimals));
            json.writeNumberField("ts", System.currentTimeMillis());
            json.writeEndObject();
        } catch (IOException e) {
            value.release();
            throw new IllegalStateException("cannot encode a demo quote", e);
        }
        return value;
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
