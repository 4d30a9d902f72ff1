package io.ringcast.server.internal;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.protocol.SubscribeOptions;
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
    private final SubscribeChecks checks = new SubscribeChecks(2, 2, 64, new Views(1000), SubscribeMemory.unbounded());

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

    // ------------------------------------------------------------------ options

    @Test
    void noOptionsAndOptionsThatParsePass() {
        assertThat(checks.options(SubscribeOptions.NONE)).isSameAs(Verdict.PASSED);
        assertThat(checks.options(SubscribeOptions.builder().maxRate(4).fields("bid", "quote.ask")
                .filter("spread < 0.0005").rewind(64).rewindSince(0).build())).isSameAs(Verdict.PASSED);
    }

    @Test
    void fieldsTheProjectionRefusesAreInvalidOptionsWithItsMessage() {
        assertRefused(checks.options(SubscribeOptions.builder().fields("a", "a").build()), ErrorCode.INVALID_OPTIONS,
                "fields: path 'a' is named twice");
        assertRefused(checks.options(SubscribeOptions.builder().fields("quote", "quote.bid").build()),
                ErrorCode.INVALID_OPTIONS,
                "fields: path 'quote.bid' is inside path 'quote', which is copied whole; name one of them");
        assertRefused(checks.options(SubscribeOptions.builder().fields("").build()), ErrorCode.INVALID_OPTIONS,
                "fields: empty path");
    }

    @Test
    void aFilterThatDoesNotParseIsInvalidOptionsWithItsMessage() {
        assertRefused(checks.options(SubscribeOptions.builder().filter("spread 0.0005").build()),
                ErrorCode.INVALID_OPTIONS, "filter: expected a comparison operator after 'spread' at column 8");
        assertRefused(checks.options(SubscribeOptions.builder().filter("  ").build()), ErrorCode.INVALID_OPTIONS,
                "filter: empty");
    }

    @Test
    void fieldsAreCheckedBeforeTheFilter() {
        assertRefused(checks.options(SubscribeOptions.builder().fields("a b").filter("x ~ 1").build()),
                ErrorCode.INVALID_OPTIONS, "fields: character U+0020 is not allowed in path 'a b'");
    }

    @Test
    void rewindBeyondHistoryLengthIsInvalidOptions() {
        assertRefused(checks.options(SubscribeOptions.builder().rewind(65).build()), ErrorCode.INVALID_OPTIONS,
                "rewind: 65 updates, more than the 64 a topic's history keeps (history.length)");
        assertThat(checks.options(SubscribeOptions.builder().rewind(64).build())).isSameAs(Verdict.PASSED);
    }
}
