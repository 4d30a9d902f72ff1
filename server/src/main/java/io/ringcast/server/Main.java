package io.ringcast.server;

import io.ringcast.server.config.ConfigException;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.EnvOverrides;
import io.ringcast.server.config.ServerConfig;
import io.netty.util.ResourceLeakDetector;
import io.ringcast.server.internal.FatalErrors;
import io.ringcast.server.internal.SignalExit;
import io.ringcast.server.cli.PubCommand;
import io.ringcast.server.cli.RemoveCommand;
import io.ringcast.server.cli.SubCommand;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar ringcast-server.jar [--config PATH]}: starts a node and runs until SIGTERM or
 * Ctrl-C. The same jar is the command-line client: {@code sub}, {@code pub} and {@code remove}
 * (package {@code io.ringcast.server.cli}, docs/cli.md), and it hashes passwords: {@code hash-password}.
 * Config: {@code --config PATH}, else {@code config/server.yaml} when present in the working
 * directory, else the embedded defaults; then {@code RINGCAST_*} environment variables set keys
 * over it ({@link EnvOverrides}). Exit codes: 0 after a clean stop (SIGTERM, Ctrl-C),
 * 2 for a bad command line or config, 1 when the node could not start (for example the port is
 * taken), {@value FatalErrors#EXIT_STATUS} after a fatal error such as an {@code OutOfMemoryError}
 * (see {@link FatalErrors}; run it with {@code -XX:+ExitOnOutOfMemoryError} too).
 */
@Command(name = "ringcast-server", mixinStandardHelpOptions = true, version = "Ringcast 0.1.0",
        description = "Runs one Ringcast pub/sub node; with a command, a client of one (sub, pub, remove).",
        subcommands = {SubCommand.class, PubCommand.class, RemoveCommand.class})
public final class Main implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "PATH",
            description = "YAML config file (default: config/server.yaml when present, else the embedded defaults)")
    Path config;

    private final PrintWriter err;

    Main(PrintWriter err) {
        this.err = err;
    }

    /** Runs the node until SIGTERM or Ctrl-C and exits with the status the class comment lists. */
    public static void main(String[] args) {
        String commonPool = "java.util.concurrent.ForkJoinPool.common.parallelism";
        if (System.getProperty(commonPool) == null) {
            // on one or two CPUs the common pool's parallelism is 1, and CompletableFuture's async
            // methods given no executor then start a thread per task: the cluster engine's did (Ratis,
            // gRPC), ~500 threads a second over five nodes at 200 publishes/s. Set before the pool exists.
            System.setProperty(commonPool, String.valueOf(Math.max(2, Runtime.getRuntime().availableProcessors() - 1)));
        }
        String maxOrder = "io.netty.allocator.maxOrder";
        if (System.getProperty(maxOrder) == null) {
            // Netty's pooled allocator takes direct memory in chunks of 8 KiB << maxOrder, 4 MiB by
            // default, at least one for each arena a thread allocates in: mostly empty in a node whose
            // buffers are frames of a few hundred bytes. 1 MiB chunks (a larger buffer is allocated
            // unpooled) left a node 4 to 15 MB less resident at 1,000 subscribers (docs/benchmarks.md,
            // "A smaller memory floor"). Set before the allocator exists; -Dio.netty.allocator.maxOrder wins.
            System.setProperty(maxOrder, "7");
        }
        String recyclerRatio = "io.netty.recycler.ratio";
        if (System.getProperty(recyclerRatio) == null) {
            // Netty gives one new pooled buffer object in 8 a handle to be recycled with. A topic's
            // history keeps an update's buffer for seconds to minutes, past a young collection: the
            // other seven were promoted and died in the old generation, ~1 MB/s at 1.5M deliveries/s,
            // and a full collection of 40-70 ms came every minute. With all recycled the old
            // generation stays flat (docs/benchmarks.md, "Buffer objects recycled"). Set before the
            // first buffer; -Dio.netty.recycler.ratio wins.
            System.setProperty(recyclerRatio, "1");
        }
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            // Netty's default samples 1 buffer in 128 with a stack trace per retained copy: on the fan-out
            // path that is ~840 B per sampled frame per subscriber. Tests run paranoid; a node does not,
            // unless started with -Dio.netty.leakDetection.level=simple|advanced|paranoid.
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        System.exit(run(args, new PrintWriter(System.err, true)));
    }

    /**
     * {@code hash-password}: reads a password from standard input (first line) and prints its bcrypt
     * hash for {@code security.principals[].passwordHash}; the password itself is never stored.
     */
    @Command(name = "hash-password", description = "Reads a password from standard input and prints its bcrypt "
            + "hash, for security.principals[].passwordHash.")
    int hashPassword(@Option(names = "--cost", defaultValue = "12", description = "bcrypt cost, 10..14 "
            + "(each step doubles the time a login takes; default ${DEFAULT-VALUE})") int cost) throws IOException {
        if (cost < 10 || cost > 14) {
            err.println("ringcast: --cost must be between 10 and 14, got " + cost);
            return 2;
        }
        String password = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                java.nio.charset.StandardCharsets.UTF_8)).readLine();
        if (password == null || password.isEmpty()) {
            err.println("ringcast: no password on standard input");
            return 2;
        }
        System.out.println(at.favre.lib.crypto.bcrypt.BCrypt.withDefaults().hashToString(cost, password.toCharArray()));
        return 0;
    }

    /** Runs the command line and returns its exit code: what {@link #main} does, minus the exit. */
    static int run(String[] args, PrintWriter err) {
        CommandLine cl = new CommandLine(new Main(err));
        // scripts/ringcast runs the jar as "ringcast": the usage then names the command as typed
        cl.setCommandName(System.getProperty("ringcast.command", "ringcast-server"));
        cl.setCaseInsensitiveEnumValuesAllowed(true); // --format json, --value-encoding base64
        cl.setErr(err);
        return cl.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        ServerConfig cfg;
        EnvOverrides env;
        Path file = ConfigLoader.resolveFile(config);
        try {
            env = EnvOverrides.from(System.getenv());
            cfg = ConfigLoader.resolve(config, env);
        } catch (ConfigException e) {
            err.println("ringcast: bad config: " + e.getMessage());
            return 2;
        }
        FatalErrors.install();
        if (!ManagementFactory.getRuntimeMXBean().getInputArguments().contains("-XX:+ExitOnOutOfMemoryError")) {
            LoggerFactory.getLogger(Main.class).warn("started without -XX:+ExitOnOutOfMemoryError: an OutOfMemoryError "
                    + "the node does not see itself (inside Netty or the JVM) could leave it running half dead");
        }
        RingcastServer server;
        try {
            server = RingcastServer.start(cfg);
        } catch (Exception e) {
            err.println("ringcast: could not start: " + (e.getMessage() != null ? e.getMessage() : e));
            return 1;
        }
        if (file != null) {
            try {
                server.watchConfig(file, env);
            } catch (IOException e) {
                err.println("ringcast: cannot watch " + file + " for changes (features will not reload): " + e);
            }
        }
        String host = cfg.server().host();
        boolean everyInterface = host.equals("0.0.0.0") || host.equals("::");
        String url = everyInterface ? server.webSocketUrl().replace("127.0.0.1", "localhost") : server.webSocketUrl();
        System.out.println("Ringcast listening on " + url + " (health: "
                + url.replaceFirst("^ws", "http").replace("/ws", "/health") + ")");
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "ringcast-shutdown"));
        // SIGTERM and Ctrl-C are the normal way to stop: exit 0 after the clean stop (the shutdown hook), not the
        // JVM's 143/130, which a plain systemd unit would count as a failure
        SignalExit.exitZeroOn("TERM");
        SignalExit.exitZeroOn("INT");
        stopped.await();
        return 0;
    }
}
