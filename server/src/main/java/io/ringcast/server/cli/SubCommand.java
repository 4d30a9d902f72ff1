package io.ringcast.server.cli;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.server.internal.SignalExit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * {@code sub URL SELECTOR}: prints every update of the topics the selector matches, and every
 * removal of one of them, one line each, until {@code --count} lines were printed, SIGTERM or
 * Ctrl-C (exit 0 either way).
 *
 * <p><b>Threads.</b> The client's event-loop thread only queues what it hears (updates, removals,
 * refusals, connection news) on a bounded queue; the command's own thread prints all of it, a batch at a
 * time with one flush per batch, so that a slow terminal never runs inside a client callback. The
 * shutdown hook (SIGTERM, Ctrl-C) asks that thread to stop and waits until what it took was flushed.
 */
@Command(name = "sub", mixinStandardHelpOptions = true, sortOptions = false,
        header = "Prints the updates of the topics a selector matches, and their removals, one line each.",
        description = {"Each update is one line on standard output: TOPIC SEQUENCE VALUE, or JSON with --format "
                + "json. First comes the current value of each topic the selector matches (a snapshot), then the "
                + "updates as they come; a lost connection is resumed where it left off. Status lines "
                + "(subscribed, connection lost) go to standard error.",
                "A topic that is removed is one line too: TOPIC removed after LASTSEQUENCE, or JSON with kind "
                + "REMOVED. A later publish creates it again, and its updates come from sequence 1.",
                "SELECTOR is a topic path whose segments may be + (any one segment) or, last, # (that level and "
                + "everything below): demo/fx/+, demo/#."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:--count lines printed, or stopped by SIGTERM / Ctrl-C, or standard output closed",
                "1:could not connect within --connect-timeout-ms",
                "2:bad command line: an unknown option, a URL that is not ws:// or wss://, an invalid selector",
                "4:the server refused the login or the subscription (the error code is in the message)"})
public final class SubCommand implements Callable<Integer> {
    /**
     * Updates queued for printing, at most, and the most bytes of their values ({@link #MAX_QUEUED_BYTES}).
     * When the terminal or pipe is slower than the feed, the event loop waits for room: the connection
     * is then read no faster than it is printed, and the server's slow-consumer rule decides, as for
     * any client that falls behind. Bytes, not only updates: 65,536 updates of 1 kB held 64 MB here.
     */
    private static final int MAX_QUEUED = 8_192;
    /** Bytes of queued values at most (an update counts one byte at least), before the event loop waits. */
    private static final int MAX_QUEUED_BYTES = 1 << 20;
    /** The most updates printed between two flushes. */
    private static final int MAX_BATCH = 4_096;
    /** How long the shutdown hook waits for the printing thread to flush what it took. */
    private static final long STOP_WAIT_MS = 5_000;
    private static final Object STOP = new Object();

    /** News from the client for the printing thread: a line for standard error. */
    private record Notice(String text) {
    }

    /** A topic the subscription received was removed after its update {@code lastSequence}: a line of its own. */
    private record Removal(String topic, long lastSequence) {
    }

    /** The server refused the subscription: the command ends with {@link ConnectionOptions#EXIT_REFUSED}. */
    private record Refusal(RingcastException error) {
    }

    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "1", paramLabel = "SELECTOR", description = "What to subscribe to, e.g. 'demo/fx/+' or 'demo/#'")
    String selector;

    @Option(names = {"-n", "--count"}, paramLabel = "N", description = "Stop after printing N lines "
            + "(snapshots and removals count); default: run until SIGTERM or Ctrl-C")
    Integer count;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text", description = "text (default): "
            + "TOPIC SEQUENCE VALUE, control characters in the value escaped (\\n, \\t, \\\\, \\u00XX); json: one "
            + "object a line with topic, sequence, kind (SNAPSHOT, UPDATE, SNAPSHOT_AFTER_GAP, CONFLATED, "
            + "GAP_WITHOUT_VALUE; REMOVED, without a value) and value")
    UpdateFormat format;

    @Option(names = "--value-encoding", paramLabel = "ENCODING", defaultValue = "utf8", description = "How values "
            + "are printed: utf8 (default; bytes that are not UTF-8 print as U+FFFD), base64 or hex, for binary values")
    ValueEncoding valueEncoding;

    private final BlockingQueue<Object> events = new ArrayBlockingQueue<>(MAX_QUEUED);
    /** Room for values' bytes in {@link #events}: taken by the event loop, given back once printed. */
    private final Semaphore queuedBytes = new Semaphore(MAX_QUEUED_BYTES);
    private final CountDownLatch printingDone = new CountDownLatch(1);
    private volatile boolean stopping;

    SubCommand() {
    }

    /** Runs the subscription and returns the exit status that the usage lists. */
    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        RingcastClient.Builder builder;
        try {
            builder = checkedBuilder();
        } catch (ParameterException e) {
            return ConnectionOptions.badCommandLine(e, err);
        }
        CliLogging.toStandardError();
        RingcastClient client = builder.connectionListener(new ConnectionNotices(text -> queue(new Notice(text)))).build();
        Thread stopHook = new Thread(() -> stopAndAwaitPrinting(client), "ringcast-sub-stop");
        Runtime.getRuntime().addShutdownHook(stopHook);
        SignalExit.exitZeroOn("TERM");
        SignalExit.exitZeroOn("INT");
        try {
            Subscription subscription = client.subscribe(selector, new Queueing());
            subscription.confirmed().thenRun(() -> queue(new Notice("subscribed to '" + selector + "'")));
            int connected = ConnectionOptions.connect(client, err);
            if (connected != 0) {
                return stopping ? 0 : connected;
            }
            return print(err);
        } finally {
            stopping = true;
            events.clear(); // an event loop waiting on a full queue goes on, and then queues nothing more
            queuedBytes.release(MAX_QUEUED_BYTES); // the same for one waiting for bytes
            client.close();
            printingDone.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(stopHook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running: it returns now that printing is done
            }
        }
    }

    /** The client's builder once every argument checked out; a {@link ParameterException} says what did not. */
    private RingcastClient.Builder checkedBuilder() {
        if (count != null && count < 1) {
            throw new ParameterException(spec.commandLine(), "--count must be at least 1, got " + count);
        }
        try {
            Selector.parse(selector, PathLimits.WIDEST);
        } catch (ProtocolException e) {
            throw new ParameterException(spec.commandLine(), e.reason());
        }
        return connection.builder();
    }

    /** The printing loop, on the command's thread; returns the exit status. */
    private int print(PrintWriter err) throws Exception {
        List<Object> batch = new ArrayList<>(MAX_BATCH);
        long printed = 0;
        try (UpdateLines lines = new UpdateLines(new BufferedWriter(new OutputStreamWriter(System.out,
                StandardCharsets.UTF_8)), format, valueEncoding)) {
            while (true) {
                batch.add(events.take());
                events.drainTo(batch, MAX_BATCH - 1);
                for (Object event : batch) {
                    if (event instanceof Update update) {
                        lines.write(update);
                        queuedBytes.release(bytesOf(update));
                        if (count != null && ++printed == count) {
                            return 0;
                        }
                    } else if (event instanceof Removal removal) {
                        lines.writeRemoved(removal.topic(), removal.lastSequence());
                        if (count != null && ++printed == count) {
                            return 0;
                        }
                    } else if (event instanceof Notice notice) {
                        lines.flush(); // what came before the news is printed before it
                        err.println("ringcast: " + notice.text());
                    } else if (event instanceof Refusal refusal) {
                        lines.flush();
                        err.println("ringcast: " + refusal.error().getMessage()); // the code, the server's reason
                        return ConnectionOptions.EXIT_REFUSED;
                    } else if (event == STOP) {
                        return 0;
                    }
                }
                batch.clear();
                lines.flush();
                if (System.out.checkError()) {
                    return 0; // the reader went away (e.g. `| head`): nothing left to print to
                }
                if (stopping && events.isEmpty()) {
                    return 0; // the hook's STOP did not fit in a full queue; what was queued is printed
                }
            }
        }
    }

    /** Shutdown hook: stops the printing thread after what it took, closes the client. */
    private void stopAndAwaitPrinting(RingcastClient client) {
        stopping = true;
        events.offer(STOP); // a full queue is being printed: the loop ends at the STOP or the finally
        client.close(); // no more updates; a connect() in progress fails, and the command returns
        try {
            printingDone.await(STOP_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Event loop: hands {@code event} to the printing thread, waiting while the queue is full (see {@link #MAX_QUEUED}). */
    private void queue(Object event) {
        if (stopping) {
            return;
        }
        try {
            if (event instanceof Update update) {
                queuedBytes.acquire(bytesOf(update));
            }
            events.put(event);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What an update takes of {@link #MAX_QUEUED_BYTES}: its value's bytes, one at least, the whole budget at most. */
    private static int bytesOf(Update update) {
        return Math.max(1, Math.min(MAX_QUEUED_BYTES, update.value().length));
    }

    /** The subscription's listener: on the event loop, it only queues. */
    private final class Queueing implements UpdateListener {
        @Override
        public void onUpdate(Update update) {
            queue(update);
        }

        @Override
        public void onRemoved(String topic, long lastSequence) {
            queue(new Removal(topic, lastSequence));
        }

        @Override
        public void onError(RingcastException error) {
            if (error.code() != null && !error.code().fatal()) {
                queue(new Refusal(error)); // a refusal ends the subscription; a fatal error ends a connection,
            }                               // which ConnectionNotices reports, and the subscription resumes
        }
    }
}
