package io.ringcast.benchmark.load;

import ch.qos.logback.classic.Level;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.protocol.Transport;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigException;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * {@code java -jar ringcast-bench.jar [OPTIONS]}: the end-to-end load generator. One run, or with
 * {@code --sweep} a series of runs at rising rates. Prints a summary and writes JSON, {@code .hgrm}
 * and PNG files into {@code --out}. Exit codes: 0 when every subscriber received every value once
 * and in order (whatever the speed), 1 when any value was lost, duplicated or reordered or a
 * subscriber failed (a lean one given a delta or losing its connection), 2 for a
 * bad command line, 3 when the run could not be carried out (no server, refused subscription,
 * files not writable). How to read the figures: {@code docs/benchmarks.md}.
 */
@Command(name = "ringcast-bench", mixinStandardHelpOptions = true, version = "Ringcast load generator 0.1.0",
        sortOptions = false, usageHelpWidth = 110,
        description = {"End-to-end load generator for Ringcast: paced publishers, many cheap subscribers, latency "
                + "from the intended send time, and a per-subscriber check for lost, duplicated and out-of-order "
                + "values."},
        exitCodeListHeading = "Exit codes:%n",
        exitCodeList = {"0:every value arrived once and in order (speed never fails a run)",
                "1:a value was lost, duplicated or out of order, or a subscriber failed (lean: a delta, a lost connection)",
                "2:bad command line", "3:the run could not be done (server unreachable, subscription refused, I/O)"})
public final class LoadGenerator implements Callable<Integer> {
    /** An option whose values are an enum's constants, written in lower case and read in any case. */
    abstract static class LowerCaseEnumConverter<E extends Enum<E>> implements CommandLine.ITypeConverter<E> {
        private final Class<E> type;

        LowerCaseEnumConverter(Class<E> type) {
            this.type = type;
        }

        @Override
        public E convert(String value) {
            try {
                return Enum.valueOf(type, value.toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not one of " + String.join(", ",
                        java.util.Arrays.stream(type.getEnumConstants())
                                .map(c -> c.name().toLowerCase(java.util.Locale.ROOT)).toList()));
            }
        }
    }

    /** {@code --padding zeros|random|text}, case-insensitive. */
    static final class PaddingConverter extends LowerCaseEnumConverter<Padding> {
        PaddingConverter() {
            super(Padding.class);
        }
    }

    /** {@code --value-format binary|json}, case-insensitive. */
    static final class ValueFormatConverter extends LowerCaseEnumConverter<ValueFormat> {
        ValueFormatConverter() {
            super(ValueFormat.class);
        }
    }

    /** {@code --subscriber-client lean|java}, case-insensitive. */
    static final class SubscriberClientConverter extends LowerCaseEnumConverter<SubscriberClient> {
        SubscriberClientConverter() {
            super(SubscriberClient.class);
        }
    }

    /** {@code --target ringcast|jetstream|redis}, case-insensitive. */
    static final class TargetConverter extends LowerCaseEnumConverter<Target> {
        TargetConverter() {
            super(Target.class);
        }
    }

    /** {@code --transport auto|nio|epoll|io_uring}, as the server's {@code server.transport} spells them. */
    static final class TransportConverter implements CommandLine.ITypeConverter<Transport> {
        @Override
        public Transport convert(String value) {
            try {
                return Transport.fromConfigName(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Exit code when a value was lost, duplicated or out of order, or a subscriber failed. */
    static final int EXIT_NOT_CLEAN = 1;
    /** Exit code of a bad command line (picocli's). */
    static final int EXIT_USAGE = 2;
    /** Exit code when the run could not be carried out. */
    static final int EXIT_RUN_FAILED = 3;

    @Option(names = "--servers", split = ",", paramLabel = "URL",
            description = "Comma-separated WebSocket URLs (one node or a cluster), e.g. ws://127.0.0.1:8080/ws; "
                    + "publishers and subscribers are spread over them round robin (nats:// URLs with --target "
                    + "jetstream, redis://HOST:PORT with --target redis)")
    List<String> servers;

    @Option(names = "--target", defaultValue = "RINGCAST", converter = TargetConverter.class,
            paramLabel = "ringcast|jetstream|redis",
            description = "The system loaded: ringcast, or NATS JetStream at nats:// --servers (the same workload "
                    + "through the official NATS Java client: one file-storage stream " + JetStreamStream.NAME
                    + " over the subjects bench.t0000.., replicas one per server up to 5, created or checked and "
                    + "purged at the start; publishes acked by JetStream and retried with the same Nats-Msg-Id; "
                    + "each subscriber an ordered consumer of the whole stream; --subscriber-client does not "
                    + "apply), or Redis pub/sub at a redis:// --servers (channels bench.t0000..; each publisher a "
                    + "connection sending PUBLISH pipelined, acked by its reply; each subscriber a connection on "
                    + "PSUBSCRIBE bench.*; Netty's RESP codec on the event loops of --io-threads; a lost connection "
                    + "fails the run; --subscriber-client does not apply) (default ringcast)")
    Target target;

    @Option(names = "--embedded", description = "Start an in-process server on 127.0.0.1 and a free port instead "
            + "of --servers (it shares the generator's CPU)")
    boolean embedded;

    @Option(names = "--embedded-config", paramLabel = "YAML", description = "Config of the --embedded server "
            + "(host and port are overridden: 127.0.0.1, a free port)")
    Path embeddedConfig;

    @Option(names = "--topics", defaultValue = "1000", description = "Topics bench/t0000.. (default ${DEFAULT-VALUE})")
    int topics;

    @Option(names = "--payload-bytes", defaultValue = "200",
            description = "Bytes per value, the 28-byte header included (default ${DEFAULT-VALUE})")
    int payloadBytes;

    @Option(names = "--padding", defaultValue = "ZEROS", converter = PaddingConverter.class,
            description = "What fills each value after its 28-byte header, the same in every value of a topic: zeros,"
                    + " random (incompressible) or text (JSON-like) (default zeros)")
    Padding padding;

    @Option(names = "--value-format", defaultValue = "BINARY", converter = ValueFormatConverter.class,
            paramLabel = "binary|json",
            description = "What each value is: binary (a 28-byte header, then --padding) or json (a flat object: "
                    + "{\"r\":RUN,\"p\":PUBLISHER,\"t\":TOPIC,\"c\":COUNTER,\"s\":SEND_NS,\"f0\":N,...,"
                    + "\"x\":\"PADDING\"}, which subscription views can read) (default binary)")
    ValueFormat valueFormat;

    @Option(names = "--json-fields", defaultValue = "" + LoadSpec.DEFAULT_JSON_FIELDS,
            description = "Fields f0.. of a json value, four-digit numbers that move with each update "
                    + "(default ${DEFAULT-VALUE})")
    int jsonFields;

    @Option(names = "--view-shapes", defaultValue = "0", paramLabel = "N",
            description = "Subscribe with views (json values only): subscriber i takes shape i mod N, which projects "
                    + "r, t, c, s and its own f<i> and filters on 'c > 0 and f<i> >= 1000', which every value passes: "
                    + "so every update still reaches every subscriber, through N distinct views. 0: plain "
                    + "subscriptions (default ${DEFAULT-VALUE})")
    int viewShapes;

    @Option(names = "--rate", defaultValue = "10000",
            description = "Offered publishes per second, all publishers together, evenly paced "
                    + "(default ${DEFAULT-VALUE})")
    int rate;

    @Option(names = "--publishers", defaultValue = "4",
            description = "Publisher connections, one pacing thread each (default ${DEFAULT-VALUE})")
    int publishers;

    @Option(names = "--subscribers", defaultValue = "100",
            description = "Subscriber connections (default ${DEFAULT-VALUE})")
    int subscribers;

    @Option(names = "--subscriber-client", defaultValue = "LEAN", converter = SubscriberClientConverter.class,
            paramLabel = "lean|java",
            description = "How subscribers connect: lean (a raw WebSocket per subscriber that reads each value's header "
                    + "in place, nothing allocated per update: measures the server, not the generator; no deltas, no "
                    + "compression, no reconnect: a delta or a lost connection fails the run) or java (the Java client,"
                    + " as a real Java user subscribes: a copy of each value, deltas, compression, resume) (default lean)")
    SubscriberClient subscriberClient;

    @Option(names = "--selector", defaultValue = "#",
            description = "Every subscriber's selector (default ${DEFAULT-VALUE}: the whole tree)")
    String selector;

    @Option(names = "--duration", defaultValue = "30s", converter = DurationConverter.class,
            description = "Measured time per run, e.g. 30s, 2m, 500ms (default ${DEFAULT-VALUE})")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "5s", converter = DurationConverter.class,
            description = "Time before the measured one, same rate, not measured (default ${DEFAULT-VALUE})")
    Duration warmup;

    @Option(names = "--io-threads", defaultValue = "2",
            description = "Event loops shared by every client connection (default ${DEFAULT-VALUE})")
    int ioThreads;

    @Option(names = "--transport", defaultValue = "auto", converter = TransportConverter.class,
            description = "Netty transport of those event loops: auto (the first available of "
                    + "the native ones, else nio), nio, epoll or io_uring, as the server's server.transport "
                    + "(default ${DEFAULT-VALUE})")
    Transport transport;

    @Option(names = "--out", defaultValue = "load-results", paramLabel = "DIR",
            description = "Directory for the JSON, .hgrm and PNG files (default ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--report-interval", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Also report every interval of the measured time on its own (deliveries/s, p50, p99, "
                    + "max): a line on stdout and a row of NAME-intervals.csv in --out, e.g. 10s; for long runs "
                    + "(scripts/soak.sh). Single runs only (default: off)")
    Duration reportInterval;

    @Option(names = "--sweep", description = "Raise the rate step by step until a step is not clean; report the "
            + "max clean rate (p99 < 10 ms, achieved >= 95%% of offered, nothing lost, duplicated or reordered)")
    boolean sweep;

    @Option(names = "--sweep-start", defaultValue = "1000",
            description = "First rate of the sweep (default ${DEFAULT-VALUE})")
    int sweepStart;

    @Option(names = "--sweep-step", defaultValue = "1000",
            description = "Rate added per step (default ${DEFAULT-VALUE})")
    int sweepStep;

    @Option(names = "--sweep-max", defaultValue = "50000",
            description = "Last rate tried (default ${DEFAULT-VALUE})")
    int sweepMax;

    @Option(names = "--sweep-p99-below-ms", defaultValue = "10",
            description = "A sweep step is clean only with p99 below this (default ${DEFAULT-VALUE}); a large bound "
                    + "finds the highest rate at which nothing is lost and the publishers keep their pace")
    double sweepP99BelowMs;

    @Option(names = "--server-pids", split = ",", paramLabel = "PID",
            description = "Process ids of the servers (Linux): their CPU time (user + system, /proc) over the "
                    + "measured window and the drain is reported with deliveries per server CPU second")
    List<Long> serverPids;

    @Option(names = "--verbose", description = "Log every client (and embedded server) connection")
    boolean verbose;

    @CommandLine.Spec
    CommandSpec commandSpec;

    private final PrintWriter stdout;
    private final PrintWriter stderr;

    LoadGenerator(PrintWriter stdout, PrintWriter stderr) {
        this.stdout = stdout;
        this.stderr = stderr;
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line and returns its exit code: what {@link #main} does, minus the exit. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new LoadGenerator(out, err));
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            e.printStackTrace(err);
            err.println("ringcast-bench: the run failed: " + e);
            return EXIT_RUN_FAILED; // never 1, which means "not clean"
        });
        return cl.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        if (embedded == (servers != null && !servers.isEmpty())) {
            throw new CommandLine.ParameterException(commandSpec.commandLine(),
                    "give either --servers or --embedded (exactly one)");
        }
        if (embeddedConfig != null && !embedded) {
            throw new CommandLine.ParameterException(commandSpec.commandLine(), "--embedded-config needs --embedded");
        }
        if (reportInterval != null && (reportInterval.toMillis() < 100 || sweep)) {
            throw new CommandLine.ParameterException(commandSpec.commandLine(), sweep
                    ? "--report-interval applies to single runs, not to --sweep"
                    : "--report-interval: must be at least 100ms, was " + reportInterval.toMillis() + "ms");
        }
        if (!verbose) {
            quietLogger("io.ringcast.client");
            quietLogger("io.ringcast.server");
        }
        Transport runOn;
        try {
            runOn = transport.resolve("--transport");
        } catch (IllegalStateException e) {
            stderr.println("ringcast-bench: " + e.getMessage()); // named, not available in this JVM
            return EXIT_RUN_FAILED;
        }
        RingcastServer server = null;
        EventLoopGroup group = null;
        try {
            List<String> urls = servers;
            if (embedded) {
                server = RingcastServer.start(embeddedServerConfig());
                urls = List.of(server.webSocketUrl());
                stdout.println("embedded server on " + server.webSocketUrl());
            }
            LoadSpec spec;
            try {
                spec = new LoadSpec(urls, embedded, topics, payloadBytes, rate, publishers, subscribers, selector,
                        duration.toMillis(), warmup.toMillis(), ioThreads, runOn.configName(), padding,
                        serverPids == null ? List.of() : serverPids, subscriberClient, valueFormat, jsonFields,
                        viewShapes, target);
            } catch (IllegalArgumentException e) {
                stderr.println("ringcast-bench: " + e.getMessage());
                return EXIT_USAGE;
            }
            // every client is given this group, and opens its sockets with the channel class of its transport
            group = runOn.newEventLoopGroup(ioThreads, new DefaultThreadFactory("load-io", true));
            return sweep ? runSweep(spec, group) : runOnce(spec, group);
        } catch (LoadException | ConfigException e) {
            stderr.println("ringcast-bench: " + e.getMessage());
            return EXIT_RUN_FAILED;
        } catch (IllegalArgumentException e) {
            stderr.println("ringcast-bench: " + e.getMessage());
            return EXIT_USAGE;
        } catch (IOException e) {
            stderr.println("ringcast-bench: could not write results: " + e);
            return EXIT_RUN_FAILED;
        } finally {
            if (group != null) {
                group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
            if (server != null) {
                server.close();
            }
            stdout.flush();
            stderr.flush();
        }
    }

    private int runOnce(LoadSpec spec, EventLoopGroup group) throws Exception {
        stdout.println("run " + spec.scenario());
        LoadRun.Outcome run = new LoadRun(spec, group, stdout, reportInterval == null ? 0 : reportInterval.toMillis(),
                out).execute();
        List<Path> files = new java.util.ArrayList<>(ResultFiles.writeRun(out, run));
        if (reportInterval != null) {
            files.add(LoadRun.intervalsFile(out, spec));
        }
        Summary.print(stdout, run.result());
        printWritten(files);
        return run.result().correctness().clean() ? 0 : EXIT_NOT_CLEAN;
    }

    private int runSweep(LoadSpec spec, EventLoopGroup group) throws Exception {
        RateSweep.Outcome sweepOutcome = new RateSweep(spec, sweepStart, sweepStep, sweepMax,
                new SweepResult.Criteria(sweepP99BelowMs, SweepResult.Criteria.DEFAULT.minAchievedFraction()), group,
                stdout).execute();
        List<Path> files = ResultFiles.writeSweep(out, sweepOutcome);
        Summary.printSweep(stdout, sweepOutcome.result());
        printWritten(files);
        boolean clean = sweepOutcome.result().steps().stream().allMatch(s -> s.result().correctness().clean());
        return clean ? 0 : EXIT_NOT_CLEAN;
    }

    private void printWritten(List<Path> files) {
        stdout.println("  wrote        " + String.join(", ", files.stream().map(Path::toString).toList()));
    }

    /** A {@code security} section letting anonymous sessions read and publish every topic: for benchmark servers. */
    public static final String OPEN_TO_ANONYMOUS = "security:\n  anonymousRoles: [\"everything\"]\n  roles:\n"
            + "    - name: \"everything\"\n      subscribe: [\"#\"]\n      publish: [\"#\"]\n";

    private ServerConfig embeddedServerConfig() {
        // the generator's anonymous clients publish and subscribe its own topics
        String local = "server:\n  host: 127.0.0.1\n  port: 0\n" + OPEN_TO_ANONYMOUS;
        if (embeddedConfig == null) {
            return ConfigLoader.fromYaml(local);
        }
        ServerConfig base = ConfigLoader.load(embeddedConfig);
        return new ServerConfig(new ServerConfig.Server("127.0.0.1", 0, base.server().ioThreads(),
                base.server().transport()), base.limits(),
                base.history(), base.pipeline(), base.session(), base.features(), base.state(), base.security(), base.demo(),
                base.cluster());
    }

    private static void quietLogger(String name) {
        if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger logger) {
            logger.setLevel(Level.WARN);
        }
    }
}
