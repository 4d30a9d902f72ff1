package io.ringcast.server.internal;

import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.MessageType;
import io.ringcast.server.internal.ReceivedFrames.Received;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static io.ringcast.server.internal.ReceivedFrames.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * How a single node's sequencer answers publishes from its publishers' ledgers, at the edges
 * {@link TopicSequencerTest} leaves: after a restart, after a reconnect, past the ledgers' bounds,
 * in the middle of a session, over the publish rate, and without a publisher id. The ledgers'
 * rules themselves: {@code io.ringcast.log.PublisherLedgersTest}.
 */
@Timeout(10)
class RepublishAnswersTest {

    private static Session publisher(EmbeddedNode node, long publisherId) {
        Session s = node.session(0);
        s.publisherId = publisherId;
        return s;
    }

    @Test
    void afterARestartARepublishNoLedgerVouchesForHasAnUnknownOutcomeAndIsNotApplied() {
        try (EmbeddedNode node = EmbeddedNode.restoring("limits: {publisherLedgers: 5, publisherLedgersPerPrincipal: 3}",
                List.of())) {
            Session sub = node.session(1);
            node.subscribe(sub, 1, "#");
            node.received(sub);
            Session publisher = publisher(node, 9);
            node.republish(publisher, 1, "t", "sent before the restart");
            node.republish(publisher, 1, "t", "sent before the restart");

            List<Received> errors = node.received(publisher);
            assertThat(errors).extracting(Received::type, Received::id, Received::code).containsExactly(
                    tuple(MessageType.ERROR, 1, ErrorCode.PUBLISH_OUTCOME_UNKNOWN.code()),
                    tuple(MessageType.ERROR, 1, ErrorCode.PUBLISH_OUTCOME_UNKNOWN.code()));
            assertThat(errors.get(0).text()).contains("publish 1 to 't'", "limits.publisherLedgers = 5",
                    "limits.publisherLedgersPerPrincipal = 3", "not applied again");
            assertThat(node.received(sub)).isEmpty();
            assertThat(node.counters.errors(ErrorCode.PUBLISH_OUTCOME_UNKNOWN)).isEqualTo(2);

            node.publish(publisher, 2, "t", "new");
            node.republish(publisher, 3, "t", "sent after the new one, first send lost");
            assertThat(node.received(publisher)).as("once it recorded a new publish, the ledger vouches")
                    .extracting(Received::type, Received::id, Received::sequence).containsExactly(
                            tuple(MessageType.PUBLISH_ACK, 2, 1L), tuple(MessageType.PUBLISH_ACK, 3, 2L));
        }
    }

    @Test
    void theLedgerOfAClosedSessionAnswersForItsPublisherOnItsNextSession() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t");
            Session first = publisher(node, 77);
            node.publish(first, 5, "t", "once");
            node.closeSession(first);
            assertThat(node.counters.publisherLedgers()).as("kept for its publisher's next session").isEqualTo(1);

            Session reconnected = publisher(node, 77);
            node.republish(reconnected, 5, "t", "once");
            assertThat(node.received(reconnected)).extracting(Received::type, Received::id, Received::sequence)
                    .containsExactly(tuple(MessageType.PUBLISH_ACK, 5, 1L));
            assertThat(of(node.received(sub), MessageType.UPDATE)).as("applied once").hasSize(1);
            assertThat(node.counters.republishesRecognised()).isEqualTo(1);
        }
    }

    @Test
    void anotherPrincipalGivingTheSamePublisherIdHasALedgerOfItsOwn() {
        String security = "security: {anonymousRoles: [writer], roles: [{name: writer, subscribe: [\"#\"], publish: [\"#\"]}]}";
        try (EmbeddedNode node = new EmbeddedNode(security)) {
            Session everyone = publisher(node, 77);
            node.publish(everyone, 5, "t", "by everyone");
            Session alice = publisher(node, 77);
            alice.permissions = Permissions.of(node.config().security(), List.of("writer"), "principal 'alice'",
                    node.config().limits().pathLimits());
            node.republish(alice, 5, "t", "by alice, first send lost");

            assertThat(node.received(alice)).as("not the other principal's publish 5: applied")
                    .extracting(Received::type, Received::sequence).containsExactly(tuple(MessageType.PUBLISH_ACK, 2L));
            assertThat(node.counters.publisherLedgers()).isEqualTo(2);
        }
    }

    @Test
    void aLedgerForgottenPastTheLimitLeavesItsPublishersRepublishOutcomeUnknown() {
        try (EmbeddedNode node = new EmbeddedNode("limits: {publisherLedgers: 1, publisherLedgersPerPrincipal: 1}")) {
            Session one = publisher(node, 1);
            node.publish(one, 5, "t", "x");
            node.closeSession(one);
            Session two = publisher(node, 2);
            node.publish(two, 5, "t", "y");
            node.closeSession(two);
            assertThat(node.counters.publisherLedgersForgotten()).isEqualTo(1);

            Session stillKnown = publisher(node, 2);
            node.republish(stillKnown, 5, "t", "y");
            assertThat(node.received(stillKnown)).extracting(Received::type, Received::sequence)
                    .containsExactly(tuple(MessageType.PUBLISH_ACK, 2L));

            Session back = publisher(node, 1);
            node.republish(back, 5, "t", "x");
            List<Received> got = node.received(back);
            assertThat(got).extracting(Received::type, Received::code)
                    .containsExactly(tuple(MessageType.ERROR, ErrorCode.PUBLISH_OUTCOME_UNKNOWN.code()));
            assertThat(got.get(0).text()).contains("limits.publisherLedgers = 1");
        }
    }

    @Test
    void aPublisherWhoseLedgerWasForgottenMidSessionIsToldToPublishThroughAnotherConnection() {
        try (EmbeddedNode node = new EmbeddedNode("limits: {publisherLedgers: 1, publisherLedgersPerPrincipal: 1}")) {
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t");
            node.received(sub);
            Session busy = publisher(node, 1);
            node.publish(busy, 1, "t", "first");
            node.publish(publisher(node, 2), 1, "t", "another publisher: the first one's ledger is forgotten");
            // a new ledger cannot know what this session published before it: it takes none of its publishes
            node.publish(busy, 2, "t", "second");
            List<Received> refused = node.received(busy);
            assertThat(refused).extracting(Received::type, Received::id, Received::code).containsExactly(
                    tuple(MessageType.PUBLISH_ACK, 1, 0), tuple(MessageType.ERROR, 2, ErrorCode.NO_MAJORITY.code()));
            assertThat(refused.get(1).text()).contains("publish to 't' refused", "publish through another connection");

            // its client's next connection sends again what is unacked, then publishes on
            Session next = publisher(node, 1);
            node.republish(next, 2, "t", "second");
            node.publish(next, 3, "t", "third");
            node.republish(next, 4, "t", "fourth, first send lost");
            assertThat(node.received(next)).extracting(Received::type, Received::id, Received::code).containsExactly(
                    tuple(MessageType.ERROR, 2, ErrorCode.PUBLISH_OUTCOME_UNKNOWN.code()),
                    tuple(MessageType.PUBLISH_ACK, 3, 0), tuple(MessageType.PUBLISH_ACK, 4, 0));
            assertThat(of(node.received(sub), MessageType.UPDATE)).extracting(Received::text).containsExactly("first",
                    "another publisher: the first one's ledger is forgotten", "third", "fourth, first send lost");
        }
    }

    @Test
    void aPlainPublishWhoseCorrelationIdTheLedgerHoldsIsAnsweredAsBeforeAndNotAppliedTwice() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t");
            node.received(sub);
            Session publisher = publisher(node, 4);
            node.publish(publisher, 7, "t", "once");
            node.publish(publisher, 7, "t", "once"); // carried twice: a client never reuses an id within its window
            node.publish(publisher, 7, "u", "elsewhere");
            List<Received> got = node.received(publisher);
            assertThat(got).extracting(Received::type, Received::id, Received::sequence, Received::code).containsExactly(
                    tuple(MessageType.PUBLISH_ACK, 7, 1L, 0), tuple(MessageType.PUBLISH_ACK, 7, 1L, 0),
                    tuple(MessageType.ERROR, 7, 0L, ErrorCode.REPUBLISH_CONFLICT.code()));
            assertThat(got.get(2).text()).contains("first published to 't'", "not applied");
            assertThat(of(node.received(sub), MessageType.UPDATE)).extracting(Received::text).containsExactly("once");
        }
    }

    @Test
    void overThePublishRateARepublishIsStillAnsweredFromTheLedgerButNeverApplied() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session sub = node.session(1);
            node.subscribe(sub, 1, "t");
            node.received(sub);
            Session publisher = publisher(node, 3);
            node.publish(publisher, 1, "t", "applied");
            node.republishOverRate(publisher, 1, "t", "applied");
            node.republishOverRate(publisher, 2, "t", "never applied");
            node.republish(publisher, 2, "t", "never applied");

            List<Received> got = node.received(publisher);
            assertThat(got).extracting(Received::type, Received::id, Received::sequence, Received::code).containsExactly(
                    tuple(MessageType.PUBLISH_ACK, 1, 1L, 0),
                    tuple(MessageType.PUBLISH_ACK, 1, 1L, 0),
                    tuple(MessageType.ERROR, 2, 0L, ErrorCode.PUBLISH_RATE_EXCEEDED.code()),
                    tuple(MessageType.PUBLISH_ACK, 2, 2L, 0));
            assertThat(got.get(2).text()).contains("limits.publishRatePerSession", "not applied");
            assertThat(of(node.received(sub), MessageType.UPDATE)).extracting(Received::text)
                    .containsExactly("applied", "never applied");
        }
    }

    @Test
    void withoutAPublisherIdARepublishIsAppliedAgain() {
        try (EmbeddedNode node = new EmbeddedNode()) {
            Session publisher = node.session(0);
            node.publish(publisher, 5, "t", "v");
            node.republish(publisher, 5, "t", "v");

            assertThat(node.received(publisher)).extracting(Received::id, Received::sequence)
                    .containsExactly(tuple(5, 1L), tuple(5, 2L));
            assertThat(publisher.publishesDecided).as("no ledger asked").isZero();
            assertThat(node.counters.publisherLedgers()).isZero();
        }
    }
}
