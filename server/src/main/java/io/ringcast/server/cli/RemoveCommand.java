package io.ringcast.server.cli;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code remove URL SELECTOR}: removes the topics the selector matches that the login may publish
 * to (docs/protocol.md, "Removing topics"), prints {@code removed N topics matching 'SELECTOR'} and
 * exits 0. A refusal exits {@link ConnectionOptions#EXIT_REFUSED} with the server's error code; a
 * removal whose answer did not come (no answer in time, or the connection lost before it) exits
 * {@link ConnectionOptions#EXIT_FAILED}: it may or may not have been applied, and it is never sent again.
 *
 * <p><b>Threads.</b> The command's thread does everything: it sends the one removal and waits for
 * its answer; the client's event-loop thread only completes the future.
 */
@Command(name = "remove", mixinStandardHelpOptions = true, sortOptions = false,
        header = "Removes the topics a selector matches and prints how many were removed.",
        description = {"Every existing topic SELECTOR matches that the login may publish to is removed: its value, "
                + "history and sequence go, and its subscribers are told. A later publish to a removed path "
                + "creates it again, from sequence 1. A selector that matches nothing removes nothing (0 topics).",
                "SELECTOR is a topic path whose segments may be + (any one segment) or, last, # (that level and "
                + "everything below): demo/fx/+, demo/#.",
                "A removal is never sent again: when the connection is lost before the server's answer, it may or "
                + "may not have been applied, and the message says so."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the server removed what SELECTOR matched (perhaps nothing) and said how many",
                "1:could not connect within --connect-timeout-ms, or no answer within --ack-timeout-ms or before "
                        + "the connection was lost (the removal may or may not have been applied)",
                "2:bad command line: an unknown option, a URL that is not ws:// or wss://, an invalid selector",
                "4:the server refused the login or the removal (the error code is in the message)"})
public final class RemoveCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "1", paramLabel = "SELECTOR", description = "What to remove, e.g. 'demo/fx/EURUSD', "
            + "'demo/fx/+' or 'demo/#'")
    String selector;

    @Option(names = "--ack-timeout-ms", paramLabel = "MS", defaultValue = "30000", description = "How long to wait "
            + "for the server's answer once connected before giving up (default ${DEFAULT-VALUE})")
    long ackTimeoutMs;

    RemoveCommand() {
    }

    /** Removes and returns the exit status that the usage lists. */
    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        RingcastClient.Builder builder;
        try {
            Selector.parse(selector, PathLimits.WIDEST);
            builder = connection.builder();
        } catch (ProtocolException e) {
            return ConnectionOptions.badCommandLine(new ParameterException(spec.commandLine(), e.reason()), err);
        } catch (ParameterException e) {
            return ConnectionOptions.badCommandLine(e, err);
        }
        CliLogging.toStandardError();
        // losing the connection is said, as pub and sub say it (PrintWriter's lines are whole: it locks)
        try (RingcastClient client = builder.connectionListener(new ConnectionNotices(err::println)).build()) {
            int connected = ConnectionOptions.connect(client, err);
            if (connected != 0) {
                return connected;
            }
            int removed;
            try {
                removed = client.remove(selector).get(ackTimeoutMs, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                err.println("ringcast: no answer within " + ackTimeoutMs + " ms to the removal of '" + selector
                        + "': it may or may not have been applied");
                return ConnectionOptions.EXIT_FAILED;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                RingcastException failure = cause instanceof RingcastException r ? r
                        : new RingcastException(String.valueOf(cause.getMessage()), cause);
                // a refusal's message has the code and the server's reason, which names the selector; a lost
                // connection's names the selector and says that the removal may or may not have been applied
                err.println("ringcast: " + failure.getMessage());
                return failure.code() != null ? ConnectionOptions.EXIT_REFUSED : ConnectionOptions.EXIT_FAILED;
            }
            PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
            out.println(resultLine(removed, selector));
            out.flush(); // not closed: System.out is not this command's to close
            return 0;
        }
    }

    /** The line printed for a removal that the server answered: {@code removed 3 topics matching 'fx/#'}. */
    static String resultLine(int removed, String selector) {
        return "removed " + removed + (removed == 1 ? " topic" : " topics") + " matching '" + selector + "'";
    }
}
