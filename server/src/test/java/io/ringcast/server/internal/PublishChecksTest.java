package io.ringcast.server.internal;

import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.WireCodec;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PublishChecks}: each rung of the ladder, the error code it returns and the reason the
 * client reads, and its order (a refused permission takes no token of the rate).
 */
class PublishChecksTest {
    private static final String[] FX = {"fx", "EURUSD"};
    private static final long NOW = 1_000_000_000L;

    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private final Session session = new Session(1, channel.pipeline().firstContext(), 0, false);

    PublishChecksTest() {
        session.permissions = Permissions.ALL;
    }

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    private static ServerConfig.Limits limits(String yaml) {
        return ConfigLoader.fromYaml("limits: {" + yaml + "}").limits();
    }

    /** The session may publish only under {@code demo/}; returns the checks for {@code limitsYaml}. */
    private PublishChecks publishingUnderDemoOnly(String limitsYaml) {
        ServerConfig config = ConfigLoader.fromYaml("limits: {" + limitsYaml + "}\n"
                + "security: {roles: [{name: demo, subscribe: ['#'], publish: ['demo/#']}]}");
        session.permissions = Permissions.of(config.security(), List.of("demo"), "anonymous", PathLimits.WIDEST);
        return new PublishChecks(config.limits(), false, NOW);
    }

    @Test
    void publishWithinEveryLimitPasses() {
        PublishChecks checks = new PublishChecks(limits("publishRatePerSession: 10"), false, NOW);
        assertThat(checks.check(session, "fx/EURUSD", FX, 100, false, NOW)).isSameAs(Verdict.PASSED);
    }

    @Test
    void permissionDeniedWhereNoPublishSelectorOfTheSessionMatches() {
        PublishChecks checks = publishingUnderDemoOnly("");

        Verdict v = checks.check(session, "fx/EURUSD", FX, 10, false, NOW);

        assertThat(v.passed()).isFalse();
        assertThat(v.code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
        assertThat(v.reason()).isEqualTo("publish to 'fx/EURUSD' refused: anonymous may not publish there");
        assertThat(checks.check(session, "demo/fx/EURUSD", new String[] {"demo", "fx", "EURUSD"}, 10, false, NOW))
                .isSameAs(Verdict.PASSED);
    }

    @Test
    void publishRateExceededPastTheSessionsSecondOfBurst() {
        PublishChecks checks = new PublishChecks(limits("publishRatePerSession: 2"), false, NOW);
        assertThat(checks.check(session, "fx/EURUSD", FX, 1, false, NOW)).isSameAs(Verdict.PASSED);
        assertThat(checks.check(session, "fx/EURUSD", FX, 1, false, NOW)).isSameAs(Verdict.PASSED);

        Verdict v = checks.check(session, "fx/EURUSD", FX, 1, false, NOW);

        assertThat(v.code()).isEqualTo(ErrorCode.PUBLISH_RATE_EXCEEDED);
        assertThat(v.reason()).isEqualTo("publish to 'fx/EURUSD' refused: over limits.publishRatePerSession = 2 "
                + "per second");
        assertThat(checks.check(session, "fx/EURUSD", FX, 1, false, NOW + 500_000_000L))
                .as("half a second later one token is back").isSameAs(Verdict.PASSED);
    }

    @Test
    void permissionDeniedTakesNoTokenOfTheRate() {
        PublishChecks checks = publishingUnderDemoOnly("publishRatePerSession: 1");

        assertThat(checks.check(session, "fx/EURUSD", FX, 1, false, NOW).code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
        assertThat(checks.check(session, "demo/a", new String[] {"demo", "a"}, 1, false, NOW))
                .as("the one token is still there").isSameAs(Verdict.PASSED);
    }

    @Test
    void republishOverTheRateWithAPublisherIdPassesOverRateForTheLedgerToAnswer() {
        session.publisherId = 77;
        PublishChecks checks = new PublishChecks(limits("publishRatePerSession: 1"), false, NOW);
        assertThat(checks.check(session, "fx/EURUSD", FX, 1, true, NOW)).isSameAs(Verdict.PASSED);

        assertThat(checks.check(session, "fx/EURUSD", FX, 1, true, NOW)).isSameAs(Verdict.PASSED_OVER_RATE);
        assertThat(checks.check(session, "fx/EURUSD", FX, 1, false, NOW).code())
                .as("a first publish over the rate").isEqualTo(ErrorCode.PUBLISH_RATE_EXCEEDED);
    }

    @Test
    void publishRateExceededForARepublishWithoutPublisherIdOrInACluster() {
        PublishChecks single = new PublishChecks(limits("publishRatePerSession: 1"), false, NOW);
        single.check(session, "fx/EURUSD", FX, 1, true, NOW);
        assertThat(single.check(session, "fx/EURUSD", FX, 1, true, NOW).code())
                .as("no publisher id: no ledger").isEqualTo(ErrorCode.PUBLISH_RATE_EXCEEDED);

        session.publisherId = 77;
        PublishChecks clustered = new PublishChecks(limits("publishRatePerSession: 1"), true, NOW);
        clustered.check(session, "fx/EURUSD", FX, 1, true, NOW);
        assertThat(clustered.check(session, "fx/EURUSD", FX, 1, true, NOW).code())
                .as("in a cluster no local ledger answers").isEqualTo(ErrorCode.PUBLISH_RATE_EXCEEDED);
    }

    @Test
    void valueTooLargeOverMaxValueBytes() {
        PublishChecks checks = new PublishChecks(limits("maxValueBytes: 100"), false, NOW);
        assertThat(checks.check(session, "fx/EURUSD", FX, 100, false, NOW)).isSameAs(Verdict.PASSED);

        Verdict v = checks.check(session, "fx/EURUSD", FX, 101, false, NOW);

        assertThat(v.code()).isEqualTo(ErrorCode.VALUE_TOO_LARGE);
        assertThat(v.reason()).isEqualTo("value of 101 bytes for 'fx/EURUSD' is over limits.maxValueBytes = 100");
    }

    @Test
    void valueTooLargeWhenTheUpdateWithItsTopicMessageWouldNotFitInAFrame() {
        PublishChecks checks = new PublishChecks(limits("maxFrameBytes: 4096, maxValueBytes: 4096"), false, NOW);
        String path = "fx/EURUSD";
        int fits = 4096 - WireCodec.topicBytes(path) - WireCodec.snapshotBytes(0);
        assertThat(checks.check(session, path, FX, fits, false, NOW)).isSameAs(Verdict.PASSED);

        Verdict v = checks.check(session, path, FX, fits + 1, false, NOW);

        assertThat(v.code()).isEqualTo(ErrorCode.VALUE_TOO_LARGE);
        assertThat(v.reason()).isEqualTo("value of " + (fits + 1) + " bytes for 'fx/EURUSD' would not fit in a frame "
                + "of limits.maxFrameBytes = 4096");
    }

    @Test
    void republishOverTheRateWithATooLargeValueIsRefusedForItsSize() {
        session.publisherId = 77;
        PublishChecks checks = new PublishChecks(limits("publishRatePerSession: 1, maxValueBytes: 10"), false, NOW);
        checks.check(session, "fx/EURUSD", FX, 1, true, NOW);

        assertThat(checks.check(session, "fx/EURUSD", FX, 11, true, NOW).code()).isEqualTo(ErrorCode.VALUE_TOO_LARGE);
    }
}
