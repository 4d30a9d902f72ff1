package io.ringcast.server.internal;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link SubscribeChecks}: each rung, the error code it returns and the reason the client reads. */
class SubscribeChecksTest {
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private final Session session = new Session(1, channel.pipeline().firstContext(), 0, false);
    private final SubscribeChecks checks = new SubscribeChecks(2);

    SubscribeChecksTest() {
        session.permissions = Permissions.ALL;
    }

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    private static Selector selector(String text) throws ProtocolException {
        return Selector.parse(text, PathLimits.DEFAULT);
    }

    /** The session may read only under {@code prices/}. */
    private void readsPricesOnly() {
        ServerConfig config = ConfigLoader.fromYaml("security: {roles: [{name: prices, subscribe: ['prices/#'], "
                + "publish: []}], anonymousRoles: [prices]}");
        session.permissions = Permissions.of(config.security(), List.of("prices"), "anonymous", PathLimits.WIDEST);
    }

    private static void assertRefused(Verdict v, ErrorCode code, String reason) {
        assertThat(v.passed()).isFalse();
        assertThat(v.code()).isEqualTo(code);
        assertThat(v.reason()).isEqualTo(reason);
    }

    @Test
    void subscriptionWithAFreeIdUnderTheLimitPasses() throws Exception {
        assertThat(checks.check(session, 1, selector("fx/#"), "fx/#")).isSameAs(Verdict.PASSED);
    }

    @Test
    void permissionDeniedForASelectorThatCouldMatchNoReadableTopic() throws Exception {
        readsPricesOnly();

        assertRefused(checks.check(session, 1, selector("fx/#"), "fx/#"), ErrorCode.PERMISSION_DENIED,
                "subscription to 'fx/#' refused: anonymous may read no topic it could match");
        assertThat(checks.check(session, 1, selector("#"), "#")).as("# meets prices/#").isSameAs(Verdict.PASSED);
    }

    @Test
    void duplicateSubscriptionIdForZeroWhichIsReserved() throws Exception {
        assertRefused(checks.check(session, 0, selector("fx/#"), "fx/#"), ErrorCode.DUPLICATE_SUBSCRIPTION_ID,
                "subscription id 0 is reserved");
    }

    @Test
    void duplicateSubscriptionIdForAnIdOpenOnTheSession() throws Exception {
        session.openSubscriptionIds.add(5);

        assertRefused(checks.check(session, 5, selector("fx/#"), "fx/#"), ErrorCode.DUPLICATE_SUBSCRIPTION_ID,
                "subscription id 5 is already open on this session");
    }

    @Test
    void tooManySubscriptionsAtLimitsMaxSubscriptionsPerSession() throws Exception {
        session.openSubscriptionIds.add(1);
        assertThat(checks.check(session, 2, selector("a"), "a")).isSameAs(Verdict.PASSED);
        session.openSubscriptionIds.add(2);

        assertRefused(checks.check(session, 3, selector("a"), "a"), ErrorCode.TOO_MANY_SUBSCRIPTIONS,
                "session already has 2 subscriptions, the limit limits.maxSubscriptionsPerSession");
    }

    @Test
    void permissionIsCheckedBeforeTheId() throws Exception {
        readsPricesOnly();

        assertThat(checks.check(session, 0, selector("fx/#"), "fx/#").code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
    }
}
