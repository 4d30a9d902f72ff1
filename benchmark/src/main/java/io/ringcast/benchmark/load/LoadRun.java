package io.ringcast.benchmark.load;

import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoopGroup;
import io.ringcast.client.ConnectionListener;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * One load run, start to finish:
 * <ol>
 *   <li>connect the subscribers and wait until every subscription is confirmed;</li>
 *   <li>connect the publishers;</li>
 *   <li>publish at the paced rate for the warm-up, then for the measured window;</li>
 *   <li>wait for every ack and for every subscriber to have every value (the drain), or until no
 *       subscriber progresses for {@link #STALL_LIMIT_NS};</li>
 *   <li>close every client and add up what each subscriber saw.</li>
 * </ol>
 * Every client runs on the one {@link EventLoopGroup} given: a handful of threads for any number
 * of connections. Subscribers are {@link LeanSubscriber}s or Java clients ({@link
 * LoadSpec#subscriberClient()}); publishers are always Java clients. A run against JetStream
 * ({@link Target#JETSTREAM}) uses the official NATS client's connections instead ({@link
 * JetStreamClients}), after the stream was made ready, and one against Redis ({@link Target#REDIS})
 * connections of Netty's RESP codec on the same group ({@link RedisClients}); both with the same
 * pacing, checks and figures. Not thread-safe: one thread calls {@link #execute()} once.
 */
final class LoadRun {
    /** A drain that sees no subscriber progress for this long ends, and what is missing is lost. */
    static final long STALL_LIMIT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long SETUP_TIMEOUT_MS = 120_000;
    /**
     * The generator's own subscriber connections (lean, Redis) being set up at once, at most: the next
     * starts once one of them is welcomed (Redis: confirmed) or failed. Below Ringcast's default
     * {@code limits.maxConnectionsBeforeUpgrade} (1,024), past which a server closes a new connection
     * at once: ten thousand lean subscribers started together met it, and they do not retry. The
     * same bound for Redis's, so that their connect times compare.
     */
    static final int MAX_CONNECTING = 512;
    /** Publishing starts this long after the schedule is made, so every publisher thread is up. */
    private static final long START_DELAY_NS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(5);

    /** What {@link #execute()} returns: the figures and the histogram of measured latencies (ns). */
    record Outcome(LoadResult result, Histogram histogram) {
    }

    private final LoadSpec spec;
    private final EventLoopGroup group;
    private final PrintWriter log;
    private final int runId = ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
    private final MeasurementWindow window = new MeasurementWindow();
    private final LatencyRecorders latencies = new LatencyRecorders();
    /** Each measured publish's ack latency, from its intended send time. */
    private final LatencyRecorders ackLatencies = new LatencyRecorders();
    private final AtomicLong disconnects = new AtomicLong();
    private final UnackedValues unacked = new UnackedValues();
    /** A wall-clock time and the System.nanoTime() read with it: pauses are reported in wall-clock time. */
    private final long epochMsAtStart = System.currentTimeMillis();
    private final long nanoTimeAtStart = System.nanoTime();
    private final List<RingcastClient> clients = new ArrayList<>();
    private final List<LeanSubscriber> leanSubscribers = new ArrayList<>();
    /** A JetStream run's clients; null for another target. */
    private final JetStreamClients jetStream;
    /** A Redis run's clients; null for another target. */
    private final RedisClients redis;
    /** How long the subscribers took to connect until the last was confirmed; set by the connect methods. */
    private long subscribersConfirmedNs;
    /** Room for {@link #MAX_CONNECTING} connections being set up; the run's thread takes, any thread gives back. */
    private final Semaphore connecting = new Semaphore(MAX_CONNECTING);
    /** {@code --report-interval} in ms, 0 for none. */
    private final long reportIntervalMs;
    /** Where {@code NAME-intervals.csv} goes when {@link #reportIntervalMs} is set. */
    private final Path reportDir;

    LoadRun(LoadSpec spec, EventLoopGroup group, PrintWriter log) {
        this(spec, group, log, 0, null);
    }

    /**
     * A run that also reports every {@code reportIntervalMs} of its measured window (0: never) into
     * {@code reportDir/NAME-intervals.csv} and the log: see {@link IntervalReporter}.
     */
    LoadRun(LoadSpec spec, EventLoopGroup group, PrintWriter log, long reportIntervalMs, Path reportDir) {
        this.spec = spec;
        this.group = group;
        this.log = log;
        this.reportIntervalMs = reportIntervalMs;
        this.reportDir = reportDir;
        this.jetStream = spec.target() == Target.JETSTREAM ? new JetStreamClients(spec, runId, disconnects) : null;
        this.redis = spec.target() == Target.REDIS ? new RedisClients(spec, runId, disconnects, group) : null;
    }

    /** The file {@code --report-interval} writes for this spec in {@code dir}. */
    static Path intervalsFile(Path dir, LoadSpec spec) {
        return dir.resolve(spec.scenario() + "-intervals.csv");
    }

    Outcome execute() throws LoadException, InterruptedException {
        String startedAt = Instant.now().toString();
        LoadResult.Machine machine = LoadResult.Machine.current();
        String[] paths = new String[spec.topics()];
        boolean[] matched = new boolean[spec.topics()];
        Selector selector = parseSelector();
        for (int t = 0; t < paths.length; t++) {
            paths[t] = spec.topicPath(t);
            matched[t] = selector.matches(paths[t]);
        }
        IntervalReporter reporter = null;
        try {
            if (jetStream != null) {
                jetStream.prepareStream(log);
            }
            List<SubscriberTally> tallies = jetStream != null ? connectJetStreamSubscribers()
                    : redis != null ? connectRedisSubscribers() : connectSubscribers();
            List<PacedPublisher> publishers = jetStream != null ? connectJetStreamPublishers()
                    : redis != null ? connectRedisPublishers() : connectPublishers(paths);
            // a first read now: the HTTP client's start-up must not delay the read at the window's start
            // (NATS and Redis servers have no /health of Ringcast's: their wire figures stay unknown)
            ServerProbe probe = new ServerProbe(spec.target() == Target.RINGCAST ? spec.servers() : List.of());
            probe.read();

            long startNs = System.nanoTime() + START_DELAY_NS;
            long fromNs = startNs + TimeUnit.MILLISECONDS.toNanos(spec.warmupMs());
            window.open(fromNs, fromNs + TimeUnit.MILLISECONDS.toNanos(spec.durationMs()));
            List<Thread> threads = startPublishers(publishers, startNs);
            log.printf("  publishing %,d/s: %s warm-up, %s measured%n", spec.rate(), seconds(spec.warmupMs()),
                    seconds(spec.durationMs()));
            log.flush();
            if (reportIntervalMs > 0) {
                reporter = new IntervalReporter(latencies, reportIntervalMs, intervalsFile(reportDir, spec), log);
                reporter.start(window);
            }
            sleepUntil(fromNs);
            ServerProbe.Totals serverBefore = probe.read();
            long serverCpuStartNs = spec.serverPids().isEmpty() ? -1 : ProcessCpu.cpuTimeNs(spec.serverPids());
            long cpuStartNs = ProcessCpu.cpuTimeNs();
            long wallStartNs = System.nanoTime();
            long[] finalCounters = joinPublishers(threads, publishers);
            awaitAcks(publishers);
            if (redis != null) {
                redis.requirePublishers(); // before the drain, which would wait for what was never published
            }
            awaitDrain(tallies, finalCounters, matched);
            long cpuEndNs = ProcessCpu.cpuTimeNs();
            long serverCpuEndNs = spec.serverPids().isEmpty() ? -1 : ProcessCpu.cpuTimeNs(spec.serverPids());
            long serverRssBytes = spec.serverPids().isEmpty() ? -1 : ProcessCpu.rssBytes(spec.serverPids());
            long wallEndNs = System.nanoTime();
            ServerProbe.Totals serverAfter = probe.read();
            closeClients(); // orders every listener's and lean subscriber's write before the reads below
            // with a reporter, it alone drains the recorders and keeps the whole run's histogram
            Histogram histogram = reporter == null ? latencies.drain() : reporter.finish();
            LoadResult.Wire wire = LoadResult.Wire.between(serverBefore, serverAfter);
            long serverCpuNs = serverCpuStartNs < 0 || serverCpuEndNs < 0 ? -1 : serverCpuEndNs - serverCpuStartNs;
            if (jetStream != null) {
                log.printf("  JetStream publishes sent again, by what the try before met: %s%n", jetStream.retriedTries());
            }
            return new Outcome(summarize(startedAt, machine, publishers, tallies, finalCounters, matched, histogram,
                    cpuStartNs < 0 ? -1 : cpuEndNs - cpuStartNs, wallEndNs - wallStartNs, wire, wallEndNs,
                    serverCpuNs, serverRssBytes), histogram);
        } finally {
            closeClients();
            if (reporter != null) {
                reporter.stop(); // a run that failed half-way: its thread must not outlive it
            }
        }
    }

    /** Schedules every publisher from {@code startNs} and starts its thread. */
    private List<Thread> startPublishers(List<PacedPublisher> publishers, long startNs) {
        List<Thread> threads = new ArrayList<>();
        for (PacedPublisher p : publishers) {
            p.schedule(startNs, window);
            Thread thread = new Thread(p, "load-publisher-" + threads.size());
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        return threads;
    }

    /** Waits for the publishers to finish their schedules; the final counter of every topic, by topic index. */
    private long[] joinPublishers(List<Thread> threads, List<PacedPublisher> publishers) throws InterruptedException {
        for (Thread thread : threads) {
            thread.join();
        }
        long[] finalCounters = new long[spec.topics()];
        for (PacedPublisher p : publishers) {
            p.finalCounters(finalCounters);
        }
        return finalCounters;
    }

    private Selector parseSelector() throws LoadException {
        try {
            return Selector.parse(spec.selector(), PathLimits.DEFAULT);
        } catch (ProtocolException e) {
            throw new LoadException("--selector: '" + spec.selector() + "' is not valid: " + e.getMessage(), e);
        }
    }

    private List<SubscriberTally> connectSubscribers() throws LoadException, InterruptedException {
        long t0 = System.nanoTime();
        boolean lean = spec.subscriberClient() == SubscriberClient.LEAN;
        List<SubscriberTally> tallies = new ArrayList<>(spec.subscribers());
        List<CompletableFuture<Void>> confirmed = new ArrayList<>(spec.subscribers());
        for (int i = 0; i < spec.subscribers(); i++) {
            SubscriberTally tally = new SubscriberTally(i, runId, spec.topics(), window, latencies,
                    spec.valueFormat());
            tallies.add(tally);
            if (lean) {
                // its own server only: a lean subscriber does not fail over (its lost connection fails the run)
                LeanSubscriber subscriber = new LeanSubscriber(i, URI.create(spec.addressesFor(i)[0]), spec, runId,
                        tally, disconnects);
                leanSubscribers.add(subscriber);
                confirmed.add(whenRoomToConnect(() -> subscriber.connect(group)));
            } else {
                RingcastClient client = newClient("load-sub-" + i, spec.addressesFor(i));
                confirmed.add(client.subscribe(spec.selector(), spec.subscribeOptions(i), tally).confirmed());
                client.connect();
            }
        }
        long welcomedNs = 0;
        if (lean) { // every session started before any subscribes (LeanSubscriber#welcomed says why)
            awaitAll(confirmed, "subscriber");
            welcomedNs = System.nanoTime() - t0;
            confirmed.clear();
            for (LeanSubscriber s : leanSubscribers) {
                confirmed.add(s.subscribe());
            }
        }
        awaitAll(confirmed, "subscriber");
        subscribersConfirmedNs = System.nanoTime() - t0;
        log.printf("  %,d subscribers confirmed in %.1f s%s%s%n", spec.subscribers(), subscribersConfirmedNs / 1e9,
                lean ? String.format(" (lean connections, all welcomed after %.1f s)", welcomedNs / 1e9) : "", spec.viewShapes() == 0 ? ""
                        : String.format(", round robin over %d view shapes", spec.viewShapes()));
        return tallies;
    }

    /** JetStream's subscribers, one after the other: each is connected and its consumer made when it returns. */
    private List<SubscriberTally> connectJetStreamSubscribers() throws LoadException, InterruptedException {
        long t0 = System.nanoTime();
        List<SubscriberTally> tallies = new ArrayList<>(spec.subscribers());
        for (int i = 0; i < spec.subscribers(); i++) {
            SubscriberTally tally = new SubscriberTally(i, runId, spec.topics(), window, latencies, spec.valueFormat());
            tallies.add(tally);
            jetStream.subscriber(i, tally);
        }
        subscribersConfirmedNs = System.nanoTime() - t0;
        log.printf("  %,d subscribers confirmed in %.1f s (ordered consumers of JetStream stream %s)%n",
                spec.subscribers(), subscribersConfirmedNs / 1e9, JetStreamStream.NAME);
        return tallies;
    }

    /**
     * Redis's subscribers, connecting together ({@link #MAX_CONNECTING} at a time at most): each is
     * confirmed when its {@code psubscribe} reply came.
     */
    private List<SubscriberTally> connectRedisSubscribers() throws LoadException, InterruptedException {
        long t0 = System.nanoTime();
        List<SubscriberTally> tallies = new ArrayList<>(spec.subscribers());
        List<CompletableFuture<Void>> confirmed = new ArrayList<>(spec.subscribers());
        for (int i = 0; i < spec.subscribers(); i++) {
            SubscriberTally tally = new SubscriberTally(i, runId, spec.topics(), window, latencies, spec.valueFormat());
            tallies.add(tally);
            int index = i;
            confirmed.add(whenRoomToConnect(() -> redis.subscribe(index, tally)));
        }
        awaitAll(confirmed, "subscriber");
        subscribersConfirmedNs = System.nanoTime() - t0;
        log.printf("  %,d subscribers confirmed in %.1f s (PSUBSCRIBE %s on Redis)%n", spec.subscribers(),
                subscribersConfirmedNs / 1e9, RedisChannels.PATTERN);
        return tallies;
    }

    private List<PacedPublisher> connectPublishers(String[] paths) throws LoadException, InterruptedException {
        List<PacedPublisher> publishers = new ArrayList<>(spec.publishers());
        List<CompletableFuture<Void>> connected = new ArrayList<>(spec.publishers());
        for (int p = 0; p < spec.publishers(); p++) {
            RingcastClient client = newClient("load-pub-" + p, spec.addressesFor(p));
            publishers.add(new PacedPublisher(p, (topic, counter, value) -> client.publish(paths[topic], value), spec,
                    runId, unacked, ackLatencies));
            connected.add(client.connect());
        }
        awaitAll(connected, "publisher");
        return publishers;
    }

    private List<PacedPublisher> connectJetStreamPublishers() throws LoadException, InterruptedException {
        List<PacedPublisher> publishers = new ArrayList<>(spec.publishers());
        for (int p = 0; p < spec.publishers(); p++) {
            publishers.add(new PacedPublisher(p, jetStream.publication(p), spec, runId, unacked, ackLatencies));
        }
        return publishers;
    }

    private List<PacedPublisher> connectRedisPublishers() throws LoadException, InterruptedException {
        List<PacedPublisher> publishers = new ArrayList<>(spec.publishers());
        List<CompletableFuture<Void>> connected = new ArrayList<>(spec.publishers());
        for (int p = 0; p < spec.publishers(); p++) {
            publishers.add(new PacedPublisher(p, redis.publication(p, connected), spec, runId, unacked, ackLatencies));
        }
        awaitAll(connected, "publisher");
        return publishers;
    }

    private RingcastClient newClient(String name, String[] addresses) {
        RingcastClient client = RingcastClient.builder()
                .addresses(addresses)
                .clientName(name)
                .eventLoopGroup(group)
                .maxInFlightPublishes(PacedPublisher.MAX_IN_FLIGHT)
                .connectionListener(new ConnectionListener() {
                    @Override
                    public void onDisconnected(String address, RingcastException reasonOrNull, int closeCode) {
                        if (reasonOrNull != null) {
                            disconnects.incrementAndGet();
                        }
                    }
                })
                .build();
        clients.add(client);
        return client;
    }

    /**
     * Starts a connection once fewer than {@link #MAX_CONNECTING} are being set up; it holds its room
     * until the future {@code start} returns completes, either way.
     */
    private CompletableFuture<Void> whenRoomToConnect(Supplier<CompletableFuture<Void>> start)
            throws LoadException, InterruptedException {
        if (!connecting.tryAcquire(SETUP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            throw new LoadException(MAX_CONNECTING + " subscribers still connecting after " + SETUP_TIMEOUT_MS + " ms");
        }
        CompletableFuture<Void> started = start.get();
        started.whenComplete((done, failure) -> connecting.release());
        return started;
    }

    private static void awaitAll(List<CompletableFuture<Void>> futures, String what)
            throws LoadException, InterruptedException {
        try {
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new))
                    .get(SETUP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            for (int i = 0; i < futures.size(); i++) {
                CompletableFuture<Void> f = futures.get(i);
                if (f.isCompletedExceptionally()) {
                    Throwable cause = f.handle((v, x) -> x).join();
                    throw new LoadException(what + " " + i + " failed: " + cause.getMessage(), cause);
                }
            }
            throw new LoadException(what + "s not ready after " + SETUP_TIMEOUT_MS + " ms", e);
        }
    }

    private void awaitAcks(List<PacedPublisher> publishers) throws InterruptedException {
        long deadline = System.nanoTime() + STALL_LIMIT_NS;
        while (!publishers.stream().allMatch(PacedPublisher::allCompleted) && System.nanoTime() < deadline) {
            sleep(POLL_NS);
        }
    }

    /**
     * Waits until every subscriber has the last value of every topic it matches (or has failed), or
     * nobody progresses.
     */
    private void awaitDrain(List<SubscriberTally> tallies, long[] finalCounters, boolean[] matched)
            throws InterruptedException {
        long expected = 0;
        for (int t = 0; t < finalCounters.length; t++) {
            if (matched[t]) {
                expected += finalCounters[t];
            }
        }
        long lastTotal = -1;
        long lastChangeNs = System.nanoTime();
        for (;;) {
            long total = 0;
            boolean done = true;
            for (SubscriberTally tally : tallies) {
                long progress = tally.progress();
                total += progress;
                done &= progress >= expected || tally.stopped(); // a failed subscriber checks no more
            }
            long now = System.nanoTime();
            if (done) {
                return;
            }
            if (total != lastTotal) {
                lastTotal = total;
                lastChangeNs = now;
            } else if (now - lastChangeNs > STALL_LIMIT_NS) {
                log.printf("  drain stalled: subscribers have %,d of %,d values%n", total, expected * tallies.size());
                return;
            }
            sleep(POLL_NS);
        }
    }

    private LoadResult summarize(String startedAt, LoadResult.Machine machine, List<PacedPublisher> publishers,
                                 List<SubscriberTally> tallies, long[] finalCounters, boolean[] matched, Histogram h,
                                 long cpuNs, long wallNs, LoadResult.Wire wire, long endNs, long serverCpuNs,
                                 long serverRssBytes) {
        long durationNs = TimeUnit.MILLISECONDS.toNanos(spec.durationMs());
        long fromNs = window.fromNs();

        long issued = 0;
        long acked = 0;
        long failed = 0;
        long measuredIssued = 0;
        long measuredAcked = 0;
        long lastIssueNs = fromNs;
        long lastAckNs = fromNs;
        String firstFailure = null;
        Map<String, Long> failedByReason = new TreeMap<>();
        for (PacedPublisher p : publishers) {
            p.failedByReason().forEach((reason, n) -> failedByReason.merge(reason, n, Long::sum));
            issued += p.issued();
            acked += p.acked();
            failed += p.failed();
            measuredIssued += p.measuredIssued();
            measuredAcked += p.measuredAcked();
            lastIssueNs = Math.max(lastIssueNs, p.lastMeasuredIssueNs());
            lastAckNs = Math.max(lastAckNs, p.lastMeasuredAckNs());
            if (firstFailure == null) {
                firstFailure = p.firstFailure();
            }
        }
        double issueSeconds = Math.max(lastIssueNs - fromNs, durationNs) / 1e9;
        double ackSeconds = Math.max(lastAckNs - fromNs, durationNs) / 1e9;
        LoadResult.Publishes pub = new LoadResult.Publishes(spec.rate(), round(measuredIssued / issueSeconds, 1),
                issued, acked, failed, measuredIssued, firstFailure, failedByReason.isEmpty() ? null : failedByReason,
                round(measuredAcked / ackSeconds, 1));

        List<SubscriberCounts> counts = new ArrayList<>(tallies.size());
        long lastReceiveNs = fromNs;
        for (SubscriberTally tally : tallies) {
            counts.add(tally.counts(finalCounters, matched, unacked, endNs));
            lastReceiveNs = Math.max(lastReceiveNs, tally.lastMeasuredReceiveNs());
        }
        long deliveries = counts.stream().mapToLong(SubscriberCounts::deliveries).sum();
        long measuredDeliveries = counts.stream().mapToLong(SubscriberCounts::measuredDeliveries).sum();
        double deliverySeconds = Math.max(lastReceiveNs - fromNs, durationNs) / 1e9;
        LoadResult.Deliveries del = new LoadResult.Deliveries(deliveries, measuredDeliveries,
                round(measuredDeliveries / deliverySeconds, 1));

        LoadResult.LatencyMs lat = LoadResult.LatencyMs.of(h);
        LoadResult.LatencyMs ackLat = LoadResult.LatencyMs.of(ackLatencies.drain());

        long lost = counts.stream().mapToLong(SubscriberCounts::lost).sum();
        long duplicated = counts.stream().mapToLong(SubscriberCounts::duplicated).sum();
        long outOfOrder = counts.stream().mapToLong(SubscriberCounts::outOfOrder).sum();
        SubscriberCounts worst = counts.stream().max(Comparator.comparingLong(SubscriberCounts::violations)
                .thenComparing(Comparator.comparingInt(SubscriberCounts::subscriber).reversed())).orElse(null);
        List<SubscriberCounts> withErrors = counts.stream().filter(c -> c.violations() > 0 || c.errors() > 0)
                .limit(100).toList();
        long failures = counts.stream().mapToLong(SubscriberCounts::failures).sum();
        LoadResult.Correctness cor = new LoadResult.Correctness(lost + duplicated + outOfOrder + failures == 0, lost,
                duplicated, outOfOrder, counts.stream().mapToLong(SubscriberCounts::snapshots).sum(),
                counts.stream().mapToLong(SubscriberCounts::gapSnapshots).sum(),
                counts.stream().mapToLong(SubscriberCounts::conflated).sum(),
                counts.stream().mapToLong(SubscriberCounts::sequenceGaps).sum(),
                counts.stream().mapToLong(SubscriberCounts::foreignValues).sum(), disconnects.get(),
                counts.stream().mapToLong(SubscriberCounts::errors).sum(), worst, withErrors,
                unacked.countMatching(matched) * counts.size() - counts.stream().mapToLong(SubscriberCounts::unackedMissed).sum(),
                counts.stream().mapToLong(SubscriberCounts::unackedLate).sum(),
                counts.stream().mapToLong(SubscriberCounts::unackedMissed).sum(), failures,
                counts.stream().mapToLong(SubscriberCounts::unchecked).sum(),
                counts.stream().map(SubscriberCounts::failure).filter(Objects::nonNull).findFirst().orElse(null),
                counts.stream().mapToLong(SubscriberCounts::lostThenReceived).sum());

        int cores = Runtime.getRuntime().availableProcessors();
        double ofOne = cpuNs < 0 ? -1 : round(100.0 * cpuNs / wallNs, 1);
        LoadResult.Cpu cpu = new LoadResult.Cpu(cpuNs < 0 ? -1 : cpuNs / 1_000_000, wallNs / 1_000_000, ofOne,
                cpuNs < 0 ? -1 : round(ofOne / cores, 1), cores);

        LoadResult.ServerCpu serverCpu = null;
        if (!spec.serverPids().isEmpty()) {
            long served = wire.known() ? wire.deliveries() : measuredDeliveries;
            serverCpu = new LoadResult.ServerCpu(spec.serverPids(), serverCpuNs >= 0,
                    serverCpuNs < 0 ? -1 : serverCpuNs / 1_000_000, wallNs / 1_000_000,
                    serverCpuNs < 0 ? -1 : round((double) serverCpuNs / wallNs, 3),
                    serverCpuNs <= 0 ? -1 : round(served / (serverCpuNs / 1e9), 0),
                    serverCpuNs <= 0 || served == 0 ? -1 : round((double) serverCpuNs / served, 1),
                    ProcessCpu.peakRssBytes(spec.serverPids()), serverRssBytes);
        }
        return new LoadResult(spec.scenario(), startedAt, machine, spec, pub, del, lat, cor, cpu, wire,
                pauses(publishers, tallies, endNs), serverCpu, ackLat,
                TimeUnit.NANOSECONDS.toMillis(subscribersConfirmedNs));
    }

    /** The longest ack gap over the publishers and delivery gap over the subscribers. After {@link #summarize}'s counts. */
    private LoadResult.Pauses pauses(List<PacedPublisher> publishers, List<SubscriberTally> tallies, long endNs) {
        LongestGap ack = null;
        int ackPublisher = -1;
        for (int i = 0; i < publishers.size(); i++) {
            LongestGap g = publishers.get(i).ackGap(endNs);
            if (ack == null || g.longestNs() > ack.longestNs()) {
                ack = g;
                ackPublisher = i;
            }
        }
        LongestGap delivery = null;
        int deliverySubscriber = -1;
        for (int i = 0; i < tallies.size(); i++) {
            LongestGap g = tallies.get(i).deliveryGap();
            if (delivery == null || g.longestNs() > delivery.longestNs()) {
                delivery = g;
                deliverySubscriber = i;
            }
        }
        return new LoadResult.Pauses(ack == null ? 0 : ms(ack.longestNs()), epochMs(ack), ackPublisher,
                delivery == null ? 0 : ms(delivery.longestNs()), epochMs(delivery), deliverySubscriber);
    }

    /** The wall-clock time a gap ended, 0 for none. */
    private long epochMs(LongestGap gap) {
        return gap == null || gap.longestEndNs() == 0 ? 0
                : epochMsAtStart + TimeUnit.NANOSECONDS.toMillis(gap.longestEndNs() - nanoTimeAtStart);
    }

    /** Closes every client and lean subscriber and waits until they are closed; idempotent. */
    private void closeClients() {
        for (RingcastClient c : clients) {
            c.close(); // idempotent
        }
        if (jetStream != null) {
            jetStream.close(); // idempotent
        }
        if (redis != null) {
            redis.close(); // idempotent
        }
        List<ChannelFuture> closing = new ArrayList<>(leanSubscribers.size());
        for (LeanSubscriber s : leanSubscribers) {
            closing.add(s.closeAsync()); // all at once, then wait: a thousand one by one would take seconds
        }
        for (ChannelFuture closed : closing) {
            closed.awaitUninterruptibly(2 * LeanSubscriber.CLOSE_TIMEOUT_MS);
        }
    }

    static double ms(long ns) {
        return round(ns / 1e6, 3);
    }

    static double round(double v, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(v * scale) / scale;
    }

    private static String seconds(long ms) {
        return ms % 1000 == 0 ? (ms / 1000) + " s" : (ms / 1000.0) + " s";
    }

    private static void sleepUntil(long deadlineNs) throws InterruptedException {
        for (long waitNs; (waitNs = deadlineNs - System.nanoTime()) > 0; ) {
            sleep(waitNs);
        }
    }

    private static void sleep(long ns) throws InterruptedException {
        LockSupport.parkNanos(ns);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }
}
