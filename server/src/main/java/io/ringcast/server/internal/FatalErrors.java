package io.ringcast.server.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends the process on an error after which the node cannot be trusted to serve: a
 * {@link VirtualMachineError} such as {@link OutOfMemoryError} on any thread, or the death of the
 * sequencer thread. A half-dead node, its port open and nothing answered, is worse than a dead one:
 * a supervisor restarts a dead one. A {@link StackOverflowError} is not fatal here: it unwinds one
 * call chain and leaves the rest of the node as it was.
 *
 * <p>Only a node started by {@code Main} ({@link #install}) ends its process; a node embedded in
 * another program (tests, the benchmarks) leaves that decision to its host and only logs.
 * Any thread.
 */
public final class FatalErrors {
    /** The process's exit status after a fatal error: the one the JVM's {@code -XX:+ExitOnOutOfMemoryError} uses. */
    public static final int EXIT_STATUS = 3;
    private static final Logger log = LoggerFactory.getLogger(FatalErrors.class);
    private static volatile boolean installed;

    private FatalErrors() {
    }

    /** From now on a fatal error anywhere in this process ends it; also for threads that die of one uncaught. */
    public static void install() {
        installed = true;
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> {
            haltIfFatal(error, "thread " + thread.getName());
            if (previous != null) {
                previous.uncaughtException(thread, error);
            } else {
                log.error("thread {} died", thread.getName(), error);
            }
        });
    }

    static boolean isFatal(Throwable t) {
        return t instanceof VirtualMachineError && !(t instanceof StackOverflowError);
    }

    /** Ends the process if {@code t} is fatal; {@code where} names the thread or stage, for the log. */
    static void haltIfFatal(Throwable t, String where) {
        if (isFatal(t)) {
            halt(where + ": " + t, t);
        }
    }

    /**
     * Ends the process with {@link #EXIT_STATUS} without running shutdown hooks (with memory gone they
     * may never finish), after one line on standard error that a supervisor's log keeps even if the
     * logging framework cannot write any more. Only logs when not {@link #install}ed.
     */
    static void halt(String why, Throwable t) {
        if (!installed) {
            log.error("fatal error in {} (this node is embedded: its host decides whether to stop)", why, t);
            return;
        }
        System.err.println("ringcast: fatal error in " + why + "; exiting with status " + EXIT_STATUS
                + " so that a supervisor restarts the node");
        System.err.flush();
        try {
            log.error("fatal error in {}; exiting with status {}", why, EXIT_STATUS, t);
        } finally {
            Runtime.getRuntime().halt(EXIT_STATUS);
        }
    }
}
