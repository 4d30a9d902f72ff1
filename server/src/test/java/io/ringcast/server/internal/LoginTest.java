package io.ringcast.server.internal;

import at.favre.lib.crypto.bcrypt.BCrypt;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.Credentials;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Login}: quick credentials answered at once on the session's loop, a password checked on
 * the login threads and answered on the session's loop, and a refusal (not a queue) when those
 * threads are busy. The authenticator is real; the loops run without sockets.
 */
class LoginTest {
    private static final String HASH = BCrypt.withDefaults().hashToString(4, "s3cret".toCharArray());

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final DefaultEventLoop sessionLoop = new DefaultEventLoop();
    private Login login;

    @AfterEach
    void close() throws InterruptedException {
        if (login != null) {
            login.close();
        }
        sessionLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        channel.finishAndReleaseAll();
    }

    private static Authenticator authenticator(String securityYaml) throws Exception {
        ServerConfig config = ConfigLoader.fromYaml("security: " + securityYaml);
        return new Authenticator(config.security());
    }

    /** Records the one answer, and the thread it came on. */
    private static final class Answer implements Login.Outcome {
        final CompletableFuture<String> answer = new CompletableFuture<>();
        volatile Thread thread;

        @Override
        public void granted(Permissions permissions) {
            thread = Thread.currentThread();
            answer.complete("granted to " + permissions.who());
        }

        @Override
        public void refused(Credentials credentials, String reason) {
            thread = Thread.currentThread();
            answer.complete("refused: " + reason);
        }
    }

    /** Calls {@link Login#check} on {@code loop}, as the session's handler does. */
    private void checkOn(EventLoop loop, Credentials credentials, Answer answer) throws Exception {
        loop.submit(() -> login.check(credentials, loop, answer)).get(5, TimeUnit.SECONDS);
    }

    @Test
    void anonymousCredentialsAreGrantedAtOnceOnTheSessionsLoop() throws Exception {
        login = new Login(authenticator("{}"));
        Answer answer = new Answer();

        login.check(Credentials.ANONYMOUS, channel.eventLoop(), answer);

        assertThat(answer.answer).as("answered before check returned").isCompletedWithValue("granted to anonymous");
        assertThat(answer.thread).isSameAs(Thread.currentThread());
    }

    @Test
    void anonymousCredentialsAreRefusedAtOnceWhenAnonymousRolesIsEmpty() throws Exception {
        login = new Login(authenticator("{anonymousRoles: []}"));
        Answer answer = new Answer();

        login.check(Credentials.ANONYMOUS, channel.eventLoop(), answer);

        assertThat(answer.answer).isCompletedWithValue("refused: anonymous sessions are not allowed here "
                + "(security.anonymousRoles is empty): send a password or a token");
    }

    /** Logs alice in with {@code password} from the session's loop; the answer, which must come on that loop. */
    private String passwordLogin(String password) throws Exception {
        login = new Login(authenticator("{principals: [{name: alice, passwordHash: '" + HASH + "', roles: [demo]}]}"));
        Answer answer = new Answer();
        checkOn(sessionLoop, Credentials.password("alice", password), answer);
        String result = answer.answer.get(5, TimeUnit.SECONDS);
        assertThat(sessionLoop.inEventLoop(answer.thread)).as("answered on the session's loop").isTrue();
        return result;
    }

    @Test
    @Timeout(10)
    void passwordIsCheckedOffTheLoopAndAnsweredOnIt() throws Exception {
        assertThat(passwordLogin("s3cret")).isEqualTo("granted to principal 'alice'");
    }

    @Test
    @Timeout(10)
    void wrongPasswordIsRefusedOnTheSessionsLoop() throws Exception {
        assertThat(passwordLogin("guess")).isEqualTo("refused: unknown principal or wrong password");
    }

    @Test
    void passwordIsRefusedAtOnceWhenTheLoginThreadsTakeNoMore() throws Exception {
        ExecutorService full = Executors.newSingleThreadExecutor();
        full.shutdown(); // rejects every task, as a full queue does
        login = new Login(authenticator("{}"), full);
        Answer answer = new Answer();

        login.check(Credentials.password("alice", "s3cret"), channel.eventLoop(), answer);

        assertThat(answer.answer).isCompletedWithValue("refused: the server is busy checking other logins; try again");
    }

    @Test
    void closeStopsTheLoginThreadsItOwnsAndMayBeCalledTwice() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        login = new Login(authenticator("{}"), executor);

        login.close();
        login.close();

        assertThat(executor.isShutdown()).isTrue();
    }
}
