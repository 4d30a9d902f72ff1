package io.ringcast.server.internal;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.ringcast.protocol.Credentials;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The login step of a {@code HELLO}: who the client is and what it may do, by the
 * {@link Authenticator}. Quick credentials (anonymous, a token) are checked on the session's event
 * loop; a password, whose bcrypt hash takes tens of milliseconds, on this step's own threads
 * {@code ringcast-auth}, never on an event loop. Either way the answer reaches the session's
 * event loop.
 *
 * <p>Thread contract: {@link #check} on the session's event loop; {@link #close} once, when the
 * node stops. Owns its executor.
 */
final class Login implements AutoCloseable {
    /** The answer to one login, always on the session's event loop. */
    interface Outcome {
        void granted(Permissions permissions);

        /** {@code reason}: safe to send to the client and to log, never the secret. */
        void refused(Credentials credentials, String reason);
    }

    private final Authenticator authenticator;
    private final ExecutorService executor;

    /**
     * bcrypt is slow by design: two threads, and a bounded queue so that a login storm is refused,
     * not queued forever.
     */
    Login(Authenticator authenticator) {
        this(authenticator, new ThreadPoolExecutor(1, 2, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024),
                new DefaultThreadFactory("ringcast-auth", true)));
    }

    /** With the executor passwords are checked on; it is this step's from now on. */
    Login(Authenticator authenticator, ExecutorService executor) {
        this.authenticator = authenticator;
        this.executor = executor;
    }

    /**
     * Checks {@code credentials} and answers {@code outcome} on {@code loop}: at once for quick
     * credentials, later for a password, or at once refused when the login threads are busy.
     */
    void check(Credentials credentials, EventExecutor loop, Outcome outcome) {
        assert loop.inEventLoop();
        if (!Authenticator.slow(credentials)) {
            answer(credentials, outcome);
            return;
        }
        try {
            executor.execute(() -> {
                Permissions granted;
                try {
                    granted = authenticator.authenticate(credentials);
                } catch (Authenticator.Refused refused) {
                    loop.execute(() -> outcome.refused(credentials, refused.getMessage()));
                    return;
                }
                loop.execute(() -> outcome.granted(granted));
            });
        } catch (RejectedExecutionException busy) {
            outcome.refused(credentials, "the server is busy checking other logins; try again");
        }
    }

    private void answer(Credentials credentials, Outcome outcome) {
        Permissions granted;
        try {
            granted = authenticator.authenticate(credentials);
        } catch (Authenticator.Refused refused) {
            outcome.refused(credentials, refused.getMessage());
            return;
        }
        outcome.granted(granted);
    }

    /** Stops the login threads; a password being checked is abandoned. Idempotent. */
    @Override
    public void close() {
        executor.shutdownNow();
    }
}
