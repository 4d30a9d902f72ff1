package io.ringcast.server.cli;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.TopicPath;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code pub URL TOPIC [VALUE...]}: publishes each VALUE, or each line of standard input when none is
 * given, in order, and exits 0 once every one is acked. The first refusal stops it: nothing more is
 * sent, and it exits {@link ConnectionOptions#EXIT_REFUSED} with the server's error code.
 *
 * <p><b>Threads.</b> The command's thread reads and publishes, holding at most {@link #MAX_UNACKED}
 * publishes unacked; the client's event-loop thread completes them, only counting acks and keeping
 * the first failure.
 */
@Command(name = "pub", mixinStandardHelpOptions = true, sortOptions = false,
        header = "Publishes values to a topic, from the arguments or standard input, and awaits their acks.",
        description = {"Each VALUE is published to TOPIC, in order; with no VALUE, each line of standard input "
                + "until its end. It waits for the server's ack of every one. A value that starts with - goes "
                + "after --.",
                "The first refusal (PERMISSION_DENIED, VALUE_TOO_LARGE, ...) stops it: nothing more is sent and "
                + "the message names the value, the error code and the server's reason."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:every value was published and acked",
                "1:could not connect within --connect-timeout-ms, or no ack came within --ack-timeout-ms",
                "2:bad command line: an unknown option, a URL that is not ws:// or wss://, an invalid topic, "
                        + "a value that is not in --value-encoding",
                "4:the server refused the login or a publish (the error code is in the message)"})
public final class PubCommand implements Callable<Integer> {
    /**
     * Publishes sent or queued and not yet acked, at most: bounds the memory that a long standard input
     * takes (the client would queue up to its maxInFlightPublishes, then refuse).
     */
    static final int MAX_UNACKED = 1_024;

    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "1", paramLabel = "TOPIC", description = "The topic path, e.g. demo/chat/room1 (created on "
            + "its first publish)")
    String topic;

    @Parameters(index = "2..*", arity = "0..*", paramLabel = "VALUE", description = "The values, published in "
            + "order; none: each line of standard input")
    List<String> values = new ArrayList<>();

    @Option(names = "--value-encoding", paramLabel = "ENCODING", defaultValue = "utf8", description = "How the "
            + "values are written: utf8 (default; the text's UTF-8 bytes), base64 or hex, for binary values")
    ValueEncoding valueEncoding;

    @Option(names = "--ack-timeout-ms", paramLabel = "MS", defaultValue = "30000", description = "How long to wait "
            + "for an ack (through reconnects) before giving up (default ${DEFAULT-VALUE})")
    long ackTimeoutMs;

    private final Semaphore unacked = new Semaphore(MAX_UNACKED);
    private final AtomicLong acked = new AtomicLong();
    private final AtomicReference<Failure> firstFailure = new AtomicReference<>();

    /** A publish that failed: its name ({@code value 2}, {@code line 7}) and why. */
    private record Failure(String name, RingcastException error) {
    }

    PubCommand() {
    }

    /** Publishes and returns the exit status that the usage lists. */
    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<byte[]> given = new ArrayList<>(values.size());
        RingcastClient.Builder builder;
        try {
            TopicPath.validate(topic, PathLimits.WIDEST);
            for (int i = 0; i < values.size(); i++) {
                given.add(decode(values.get(i), "VALUE " + (i + 1)));
            }
            builder = connection.builder();
        } catch (ProtocolException e) {
            return ConnectionOptions.badCommandLine(new ParameterException(spec.commandLine(), e.reason()), err);
        } catch (ParameterException e) {
            return ConnectionOptions.badCommandLine(e, err);
        }
        CliLogging.toStandardError();
        // failing over to another node is said, as sub says it (PrintWriter's lines are whole: it locks)
        try (RingcastClient client = builder.connectionListener(new ConnectionNotices(err::println)).build()) {
            int connected = ConnectionOptions.connect(client, err);
            if (connected != 0) {
                return connected;
            }
            if (!given.isEmpty()) {
                for (int i = 0; i < given.size(); i++) {
                    if (!publish(client, given.get(i), "value " + (i + 1), err)) {
                        break;
                    }
                }
                return finish(err);
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            long lineNumber = 0;
            for (String line; (line = in.readLine()) != null; ) {
                lineNumber++;
                byte[] value;
                try {
                    value = decode(line, "line " + lineNumber + " of standard input");
                } catch (ParameterException e) {
                    int status = finish(err);
                    int usage = ConnectionOptions.badCommandLine(e, err);
                    return status != 0 ? status : usage;
                }
                if (!publish(client, value, "line " + lineNumber, err)) {
                    break;
                }
            }
            return finish(err);
        }
    }

    /**
     * Publishes one value unless an earlier one failed; false when the command must stop: a failure,
     * or no room for {@link #ackTimeoutMs} because acks stopped coming.
     */
    private boolean publish(RingcastClient client, byte[] value, String name, PrintWriter err)
            throws InterruptedException {
        if (firstFailure.get() != null) {
            return false;
        }
        if (!unacked.tryAcquire(ackTimeoutMs, TimeUnit.MILLISECONDS)) {
            return false; // finish() reports the acks that did not come
        }
        client.publish(topic, value).whenComplete((sequence, error) -> {
            if (error == null) {
                acked.incrementAndGet();
            } else {
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                RingcastException failure = cause instanceof RingcastException r ? r
                        : new RingcastException(String.valueOf(cause.getMessage()), cause);
                firstFailure.compareAndSet(null, new Failure(name, failure));
            }
            unacked.release();
        });
        return true;
    }

    /** Waits for the acks still due and returns the exit status, having said why when it is not 0. */
    private int finish(PrintWriter err) throws InterruptedException {
        boolean allAnswered = unacked.tryAcquire(MAX_UNACKED, ackTimeoutMs, TimeUnit.MILLISECONDS);
        Failure failed = firstFailure.get();
        if (failed != null) {
            boolean refused = failed.error().code() != null;
            // a refusal's message has the code and the server's reason, which names the topic
            err.println("ringcast: " + failed.name() + (refused ? ": " : " to '" + topic + "' failed: ")
                    + failed.error().getMessage() + " (" + acked.get() + " acked; none sent after it)");
            return refused ? ConnectionOptions.EXIT_REFUSED : ConnectionOptions.EXIT_FAILED;
        }
        if (!allAnswered) {
            err.println("ringcast: no ack within " + ackTimeoutMs + " ms for "
                    + (MAX_UNACKED - unacked.availablePermits()) + " publishes to '" + topic + "' ("
                    + acked.get() + " acked)");
            return ConnectionOptions.EXIT_FAILED;
        }
        return 0;
    }

    private byte[] decode(String text, String name) {
        try {
            return valueEncoding.decode(text);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), name + " is not " + valueEncoding + ": " + e.getMessage());
        }
    }
}
