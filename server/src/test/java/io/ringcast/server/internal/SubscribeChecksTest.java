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

    @Test
    void subscriptionWithAFreeIdUnderTheLimitPasses() throws Exception {
        assertThat(checks.check(session, 1, selector("fx/#"), "fx/#")).isSameAs(Verdict.PASSED);
    }

    @Test
    void permissionDeniedForASelectorThatCouldMatchNoReadableTopic() throws Exception {
        ServerConfig config = ConfigLoader.fromYaml("security: {roles: [{name: prices, subscribe: ['prices/#'], "
                + "publish: []}], anonymousRoles: [prices]}");
        session.permissions = Permissions.of(config.security(), List.of("prices"), "anonymous", PathLimits.WIDEST);

        Verdict v = checks.check(session, 1, selector("fx/#"), "fx/#");

        assertThat(v.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
        assertThat(v.reason()).isEqualTo("subscription to 'fx/#' refused: anonymous may read no topic it could match");
        assertThat(checks.check(session, 1, selector("#"), "#")).as("# meets prices/#").isSameAs(Verdict.PASSED);
    }

    @Test
    void duplicateSubscriptionIdForZeroWhichIsReserved() throws Exception {
        Verdict v = checks.check(session, 0, selector("fx/#"), "fx/#");

        assertThat(v.code()).isEqualTo(ErrorCode.DUPLICATE_SUBSCRIPTION_ID);
        assertThat(v.reason()).isEqualTo("subscription id 0 is reserved");
    }

    @Test
    void duplicateSubscriptionIdForAnIdOpenOnTheSession() throws Exception {
        session.openSubscriptionIds.add(5);

        Verdict v = checks.check(session, 5, selector("fx/#"), "fx/#");

        assertThat(v.code()).isEqualTo(ErrorCode.DUPLICATE_SUBSCRIPTION_ID);
        assertThat(v.reason()).isEqualTo("subscription id 5 is already open on this session");
    }

    @Test
    void tooManySubscriptionsAtLimitsMaxSubscriptionsPerSession() throws Exception {
        session.openSubscriptionIds.add(1);
        assertThat(checks.check(session, 2, selector("a"), "a")).isSameAs(Verdict.PASSED);
        session.openSubscriptionIds.add(2);

        Verdict v = checks.check(session, 3, selector("a"), "a");

        assertThat(v.code()).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
        assertThat(v.reason()).isEqualTo("session already has 2 subscriptions, the limit "
                + "limits.maxSubscriptionsPerSession");
    }

    @Test
    void permissionIsCheckedBeforeTheId() throws Exception {
        ServerConfig config = ConfigLoader.fromYaml("security: {roles: [{name: prices, subscribe: ['prices/#'], "
                + "publish: []}], anonymousRoles: [prices]}");
        session.permissions = Permissions.of(config.security(), List.of("prices"), "anonymous", PathLimits.WIDEST);

        assertThat(checks.check(session, 0, selector("fx/#"), "fx/#").code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
    }
}
