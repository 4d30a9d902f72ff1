package io.ringcast.server.internal;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shares a client's subscriptions may take of the node: what its {@code SUBSCRIBE}s keep
 * ({@link SubscribeMemory}), per session and per principal, and the views each principal may make
 * ({@link Views}). Anonymous sessions are one principal: together they cannot take what an
 * authenticated principal is owed.
 */
@Timeout(10)
class SubscribeMemoryTest {
    private static int nextId = 1;

    private static Session session(String who) {
        EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        Session s = new Session(nextId++, channel.pipeline().firstContext(), 0, false);
        s.permissions = Permissions.of(ServerConfig.defaults().security(), List.of("demo"), who, PathLimits.DEFAULT);
        return s;
    }

    @Test
    void aSessionIsRefusedWhatWouldTakeItPastItsBoundAndKeepsWhatItHad() {
        SubscribeMemory memory = new SubscribeMemory(100_000, 1_000_000);
        Session s = session("anonymous");
        assertThat(memory.charge(s, 60_000).passed()).isTrue();
        Verdict refused = memory.charge(s, 50_000);
        assertThat(refused.code()).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
        assertThat(refused.reason()).contains("limits.subscribeBytesPerSession = 100000", "60000 bytes");
        assertThat(s.subscribeBytes).as("nothing kept of the refused one").hasValue(60_000);
        assertThat(memory.charge(s, 40_000).passed()).as("what fits still fits").isTrue();

        memory.credit(s, 30_000);
        assertThat(memory.charge(s, 30_000).passed()).as("what is given back may be taken again").isTrue();
        memory.creditAll(s);
        assertThat(s.subscribeBytes).hasValue(0);
        assertThat(memory.total()).isZero();
        assertThat(memory.principals()).as("a principal holding nothing is forgotten").isZero();
    }

    @Test
    void sessionsOfOnePrincipalShareItsBoundAndLeaveOtherPrincipalsTheirs() {
        SubscribeMemory memory = new SubscribeMemory(100_000, 150_000);
        Session a1 = session("anonymous");
        Session a2 = session("anonymous");
        Session alice = session("principal 'alice'");
        assertThat(memory.charge(a1, 90_000).passed()).isTrue();
        Verdict refused = memory.charge(a2, 90_000);
        assertThat(refused.reason()).contains("limits.subscribeBytesPerPrincipal = 150000", "anonymous");
        assertThat(memory.charge(alice, 90_000).passed()).as("another principal is not charged for anonymous ones")
                .isTrue();
        memory.creditAll(a1);
        assertThat(memory.charge(a2, 90_000).passed()).isTrue();
        assertThat(memory.total()).isEqualTo(180_000);
    }

    @Test
    void aPrincipalMakesAtMostItsShareOfViewsAndAnotherStillGetsOne() {
        Views views = new Views(4, 2);
        View a = views.acquire(SubscribeOptions.builder().maxRate(1).build(), "anonymous");
        View b = views.acquire(SubscribeOptions.builder().maxRate(2).build(), "anonymous");
        assertThat(views.acquire(SubscribeOptions.builder().maxRate(3).build(), "anonymous")).as("a third view made by anonymous")
                .isNull();
        assertThat(views.principalAtLimit("anonymous")).isTrue();
        assertThat(views.acquire(SubscribeOptions.builder().maxRate(1).build(), "anonymous")).as("a view made already costs nothing")
                .isSameAs(a);
        assertThat(views.acquire(SubscribeOptions.builder().maxRate(3).build(), "principal 'alice'")).as("alice's view").isNotNull();

        views.release(b);
        assertThat(views.acquire(SubscribeOptions.builder().maxRate(4).build(), "anonymous")).as("a view in place of one released")
                .isNotNull();
        assertThat(views.size()).isEqualTo(3);
    }
}
