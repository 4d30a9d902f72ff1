package io.ringcast.it;

import at.favre.lib.crypto.bcrypt.BCrypt;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.client.Subscription;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.UpdateListener;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.ServerCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Subscriptions with options (issue 16: {@code fields}, {@code filter}, {@code maxRate}) through
 * the Java client against a real server with deltas on: what each subscription receives, its seams
 * (a value that stops passing and passes again, a resume after a cut), a permission-limited role,
 * and refused options. The browser client's are {@code BrowserClientTest}'s.
 */
@Timeout(60)
class SubscriptionViewsTest {
    private static final SubscribeOptions QUOTE = SubscribeOptions.builder().fields("bid", "spread")
            .filter("spread < 5").build();

    static RingcastServer server;
    static RingcastClient publisher;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start("""
                features:
                  deltas: true
                security:
                  anonymousRoles: ["desk"]
                  roles:
                    - name: "desk"
                      subscribe: ["views/#"]
                      publish: ["views/#"]
                    - name: "publisher"
                      subscribe: ["#"]
                      publish: ["#"]
                  principals:
                    - name: "pub"
                      passwordHash: "%s"
                      roles: ["publisher"]
                """.formatted(BCrypt.withDefaults().hashToString(4, "pub-password".toCharArray())));
        publisher = RingcastClient.builder().addresses(server.webSocketUrl()).password("pub", "pub-password").build();
        publisher.connect().get(10, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        publisher.close();
        server.close();
    }

    static RingcastClient connect() throws Exception {
        return TestServers.connect(server);
    }

    static long publish(String topic, String value) throws Exception {
        return publisher.publish(topic, value.getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
    }

    /** A quote of about 200 bytes, so that deltas pay for the plain stream. */
    static String quote(double bid, double spread) {
        return "{\"bid\":" + bid + ",\"ask\":" + (bid + spread) + ",\"spread\":" + spread + ",\"venue\":\"LSE\","
                + "\"note\":\"" + "x".repeat(120) + "\"}";
    }

    @Test
    void aFilteredProjectionGetsItsFieldsOnlyOneUnmatchedWhenAValueStopsPassingAndTheValueWhenItPassesAgain()
            throws Exception {
        long s1 = publish("views/fx/eur", quote(1.5, 2));
        try (RingcastClient c = connect()) {
            Recorded v = new Recorded();
            c.subscribe("views/fx/#", QUOTE, v).confirmed().get(10, TimeUnit.SECONDS);
            assertThat(v.updates).containsExactly(
                    new Recorded.Got("views/fx/eur", s1, UpdateKind.SNAPSHOT, "{\"bid\":1.5,\"spread\":2.0}"));

            publish("views/fx/eur", quote(1.5, 2).replace("LSE", "XETRA")); // neither field changed
            long s3 = publish("views/fx/eur", quote(1.5, 3));
            long s4 = publish("views/fx/eur", quote(1.5, 9));
            publish("views/fx/eur", quote(1.6, 8));
            long s6 = publish("views/fx/eur", quote(1.7, 1));
            Await.until(() -> v.updates.size() == 3, "the value that passes again");
            assertThat(v.updates.subList(1, 3)).containsExactly(
                    new Recorded.Got("views/fx/eur", s3, UpdateKind.UPDATE, "{\"bid\":1.5,\"spread\":3.0}"),
                    new Recorded.Got("views/fx/eur", s6, UpdateKind.UPDATE, "{\"bid\":1.7,\"spread\":1.0}"));
            assertThat(v.unmatched).containsExactly(new Recorded.Unmatched("views/fx/eur", s4));
        }
    }

    @Test
    void withDeltasOnAPlainAndAViewedSubscriptionOnOneTopicEachGetTheirOwnStreamInFull() throws Exception {
        try (RingcastClient c = connect()) {
            Recorded plain = new Recorded();
            Recorded viewed = new Recorded();
            c.subscribe("views/both", plain).confirmed().get(10, TimeUnit.SECONDS);
            c.subscribe("views/both", SubscribeOptions.builder().fields("bid").build(), viewed)
                    .confirmed().get(10, TimeUnit.SECONDS);
            long last = 0;
            for (int i = 1; i <= 5; i++) {
                last = publish("views/both", quote(i, 1));
            }
            long newest = last;
            Await.until(() -> plain.lastSequence("views/both") == newest && viewed.lastSequence("views/both") == newest,
                    "both streams to the newest update");
            assertThat(plain.updates).extracting(Recorded.Got::text)
                    .containsExactly(quote(1, 1), quote(2, 1), quote(3, 1), quote(4, 1), quote(5, 1));
            assertThat(viewed.updates).extracting(Recorded.Got::text)
                    .containsExactly("{\"bid\":1.0}", "{\"bid\":2.0}", "{\"bid\":3.0}", "{\"bid\":4.0}", "{\"bid\":5.0}");
        }
    }

    @Test
    void aViewedSubscriptionResumesAfterACutWithNoDuplicateAndEndsOnTheNewestValue() throws Exception {
        try (CutOffSubscriber c = new CutOffSubscriber(server)) {
            publish("views/resume/a", quote(1, 1));
            publish("views/resume/b", quote(1, 1));
            Recorded v = c.subscribe("views/resume/#", QUOTE);
            long a2 = publish("views/resume/a", quote(2, 1));
            Await.until(() -> v.lastSequence("views/resume/a") == a2, "a live update before the cut");

            c.cut();
            publish("views/resume/a", quote(3, 1));
            long a4 = publish("views/resume/a", quote(4, 1));
            long b2 = publish("views/resume/b", quote(2, 9)); // stops passing while the client is away
            c.letBack();

            Recorded.Unmatched bStopped = new Recorded.Unmatched("views/resume/b", b2);
            Await.until(() -> v.lastSequence("views/resume/a") == a4 && v.unmatched.contains(bStopped),
                    "the newest value of a and b's unmatched");
            long a5 = publish("views/resume/a", quote(5, 1));
            Await.until(() -> v.lastSequence("views/resume/a") == a5, "live again");
            List<Long> sequences = v.of("views/resume/a").stream().map(Recorded.Got::sequence).toList();
            assertThat(sequences).as("strictly increasing: no duplicate at the seam").isSorted().doesNotHaveDuplicates();
            assertThat(v.of("views/resume/a").get(v.of("views/resume/a").size() - 2).text())
                    .isEqualTo("{\"bid\":4.0,\"spread\":1.0}");
            assertThat(v.errors).isEmpty();
        }
    }

    @Test
    void aViewOfAPermissionLimitedRoleHoldsOnlyTheTopicsItMayRead() throws Exception {
        publish("secret/views", quote(1, 1));
        try (RingcastClient c = connect()) {
            Recorded v = new Recorded();
            c.subscribe("#", QUOTE, v).confirmed().get(10, TimeUnit.SECONDS);
            publish("secret/views", quote(2, 1));
            long mine = publish("views/limited", quote(3, 1));
            Await.until(() -> v.lastSequence("views/limited") == mine, "the readable topic");
            assertThat(v.topics()).doesNotContain("secret/views");
        }
    }

    @Test
    void maxRateSendsAtMostItsRateAndAlwaysEndsOnTheNewestValue() throws Exception {
        try (RingcastClient c = connect()) {
            Recorded v = new Recorded();
            c.subscribe("views/throttled", SubscribeOptions.builder().maxRate(5).fields("bid").build(), v)
                    .confirmed().get(10, TimeUnit.SECONDS);
            long started = System.nanoTime();
            long last = 0;
            for (int i = 1; i <= 40; i++) {
                last = publish("views/throttled", quote(i, 1));
            }
            long newest = last;
            Await.until(() -> v.lastSequence("views/throttled") == newest, "the newest value, at its time");
            double seconds = (System.nanoTime() - started) / 1e9;
            assertThat(v.updates.size()).as("at most 5/s over %.2f s, plus the first", seconds)
                    .isLessThanOrEqualTo((int) Math.ceil(seconds * 5) + 1);
            assertThat(v.updates.get(v.updates.size() - 1).text()).isEqualTo("{\"bid\":40.0}");
            // the first goes at once; 40 quick publishes cannot all be 200 ms apart, so some wait and
            // leave flagged (whether the very last waited depends on the machine's pace)
            assertThat(v.updates).extracting(Recorded.Got::kind).first().isEqualTo(UpdateKind.UPDATE);
            assertThat(v.updates).extracting(Recorded.Got::kind).contains(UpdateKind.CONFLATED)
                    .containsOnly(UpdateKind.UPDATE, UpdateKind.CONFLATED);
        }
    }

    /**
     * A value that keeps crossing the filter faster than {@code maxRate} sends: the subscription is
     * told {@code UNMATCHED} only after a value it was shown, never twice in a row, and ends on the
     * newest value (issue 27: 30 {@code onUnmatched} calls for 6 updates, 24 straight after another).
     */
    @Test
    void underMaxRateAFilterFlappingFasterThanTheRateNeverRepeatsUnmatchedAndEndsOnTheNewestValue() throws Exception {
        try (RingcastClient c = connect()) {
            List<String> events = new CopyOnWriteArrayList<>();
            c.subscribe("views/flap", SubscribeOptions.builder().maxRate(2).filter("spread < 5").fields("bid").build(),
                    new UpdateListener() {
                        @Override
                        public void onUpdate(Update u) {
                            events.add("value #" + u.sequence());
                        }

                        @Override
                        public void onUnmatched(String topic, long sequence) {
                            events.add("unmatched #" + sequence);
                        }
                    }).confirmed().get(10, TimeUnit.SECONDS);
            long started = System.nanoTime();
            long last = 0;
            for (int i = 1; i <= 61; i++) { // odd ones pass, the last one too
                last = publish("views/flap", quote(i, i % 2 == 1 ? 1 : 9));
                Thread.sleep(50); // the pace of the report: a crossing every 50 ms
            }
            long newest = last;
            Await.until(() -> events.contains("value #" + newest), "the newest value, at its time");
            double seconds = (System.nanoTime() - started) / 1e9;
            for (int i = 1; i < events.size(); i++) {
                assertThat(events.get(i).startsWith("unmatched") && events.get(i - 1).startsWith("unmatched"))
                        .as("UNMATCHED straight after UNMATCHED at %d: %s", i, events).isFalse();
            }
            assertThat(events.get(0)).as("the first thing told is a value: %s", events).startsWith("value");
            long values = events.stream().filter(e -> e.startsWith("value")).count();
            assertThat(values).as("at most 2/s over %.2f s, plus the first: %s", seconds, events)
                    .isLessThanOrEqualTo((long) Math.ceil(seconds * 2) + 1);
            assertThat(events.get(events.size() - 1)).isEqualTo("value #" + newest);
        }
    }

    @Test
    void aRewindStartsWithTheLastUpdatesInFullThenLiveAndThroughAViewWithWhatTheViewShows() throws Exception {
        long[] seq = new long[8];
        for (int i = 1; i <= 6; i++) {
            seq[i] = publish("views/rewind", quote(i, i % 2 == 0 ? 9 : 1));
        }
        try (RingcastClient c = connect()) {
            Recorded plain = new Recorded();
            Recorded viewed = new Recorded();
            c.subscribe("views/rewind", SubscribeOptions.builder().rewind(4).build(), plain)
                    .confirmed().get(10, TimeUnit.SECONDS);
            c.subscribe("views/rewind", SubscribeOptions.builder().rewind(4).fields("bid").filter("spread < 5").build(),
                    viewed).confirmed().get(10, TimeUnit.SECONDS);
            seq[7] = publish("views/rewind", quote(7, 1));
            Await.until(() -> plain.lastSequence("views/rewind") == seq[7] && viewed.lastSequence("views/rewind") == seq[7],
                    "both live after their rewinds");

            assertThat(plain.updates).as("full values, though deltas are on").containsExactly(
                    new Recorded.Got("views/rewind", seq[3], UpdateKind.SNAPSHOT, quote(3, 1)),
                    new Recorded.Got("views/rewind", seq[4], UpdateKind.SNAPSHOT, quote(4, 9)),
                    new Recorded.Got("views/rewind", seq[5], UpdateKind.SNAPSHOT, quote(5, 1)),
                    new Recorded.Got("views/rewind", seq[6], UpdateKind.SNAPSHOT, quote(6, 9)),
                    new Recorded.Got("views/rewind", seq[7], UpdateKind.UPDATE, quote(7, 1)));
            assertThat(viewed.updates).containsExactly(
                    new Recorded.Got("views/rewind", seq[3], UpdateKind.SNAPSHOT, "{\"bid\":3.0}"),
                    new Recorded.Got("views/rewind", seq[5], UpdateKind.SNAPSHOT, "{\"bid\":5.0}"),
                    new Recorded.Got("views/rewind", seq[7], UpdateKind.UPDATE, "{\"bid\":7.0}"));
            assertThat(viewed.unmatched).as("the rewind ends where the view is: the newest does not pass")
                    .containsExactly(new Recorded.Unmatched("views/rewind", seq[6]));
        }
    }

    @Test
    void subscriptionsWithEqualOptionsShareOneViewAndTheViewsGaugeCountsDistinctOnes() throws Exception {
        // no session of this class's other tests is open: their views go once the server saw them close
        Await.until(() -> server.stats().get(ServerCounter.VIEWS) == 0, "no view left of earlier tests");
        long before = 0;
        try (RingcastClient a = connect(); RingcastClient b = connect()) {
            SubscribeOptions sameAsQuote = SubscribeOptions.builder().filter("spread < 5").fields("spread", "bid").build();
            a.subscribe("views/gauge/#", QUOTE, new Recorded()).confirmed().get(10, TimeUnit.SECONDS);
            b.subscribe("views/gauge/x", sameAsQuote, new Recorded()).confirmed().get(10, TimeUnit.SECONDS);
            b.subscribe("views/gauge/#", SubscribeOptions.builder().fields("ask").build(), new Recorded())
                    .confirmed().get(10, TimeUnit.SECONDS);
            assertThat(server.stats().get(ServerCounter.VIEWS) - before).isEqualTo(2);
        }
        Await.until(() -> server.stats().get(ServerCounter.VIEWS) == before, "the views forgotten with their sessions");
    }

    @Test
    void aClientIsRefusedViewsBeyondMaxViewsPerSessionWhileAWitnessKeepsReceiving() throws Exception {
        try (RingcastClient witness = connect(); RingcastClient greedy = connect()) {
            Recorded seen = new Recorded();
            witness.subscribe("views/witness", QUOTE, seen).confirmed().get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 16; i++) { // the default limits.maxViewsPerSession
                greedy.subscribe("views/#", SubscribeOptions.builder().filter("spread < " + i).build(), new Recorded())
                        .confirmed().get(10, TimeUnit.SECONDS);
            }
            Recorded refused = new Recorded();
            Throwable t = catchThrowable(() -> greedy.subscribe("views/#",
                    SubscribeOptions.builder().filter("spread < 99").build(), refused).confirmed().get(10, TimeUnit.SECONDS));
            assertThat(t).cause().isInstanceOf(RingcastException.class).hasMessageContaining("limits.maxViewsPerSession");
            assertThat(((RingcastException) t.getCause()).code()).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
            greedy.subscribe("views/#", SubscribeOptions.builder().filter("spread < 3").build(), new Recorded())
                    .confirmed().get(10, TimeUnit.SECONDS); // a view the session has already

            long s = publish("views/witness", quote(1, 1));
            Await.until(() -> seen.lastSequence("views/witness") == s, "the witness's update");
        }
    }

    /**
     * Anonymous sessions are one principal, with a share of the node's views
     * ({@code limits.maxViewsPerPrincipal}): once they made theirs, a further one is refused naming
     * the limit, while an authenticated principal still makes views of its own, and anonymous
     * sessions still use the views that exist. A witness keeps receiving throughout.
     */
    @Test
    void anonymousSessionsTakeTheirShareOfViewsAndAnAuthenticatedPrincipalStillGetsViews() throws Exception {
        try (RingcastServer shared = TestServers.start("limits:\n  maxViews: 8\n  maxViewsPerPrincipal: 4\n"
                + TestServers.OPEN_WITH_ALICE);
             Witness witness = Witness.start(shared);
             RingcastClient first = TestServers.connect(shared);
             RingcastClient second = TestServers.connect(shared);
             RingcastClient alice = RingcastClient.builder().addresses(shared.webSocketUrl())
                     .password("alice", TestServers.ALICE_PASSWORD).build()) {
            for (int i = 0; i < 4; i++) {
                (i % 2 == 0 ? first : second).subscribe("views/#",
                        SubscribeOptions.builder().filter("spread < " + i).build(), new Recorded())
                        .confirmed().get(10, TimeUnit.SECONDS);
            }
            Throwable t = catchThrowable(() -> second.subscribe("views/#",
                    SubscribeOptions.builder().filter("spread < 99").build(), new Recorded())
                    .confirmed().get(10, TimeUnit.SECONDS));
            assertThat(t).cause().isInstanceOf(RingcastException.class)
                    .hasMessageContaining("anonymous has made 4 distinct views, its share (limits.maxViewsPerPrincipal)");
            assertThat(((RingcastException) t.getCause()).code()).isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
            second.subscribe("views/#", SubscribeOptions.builder().filter("spread < 0").build(), new Recorded())
                    .confirmed().get(10, TimeUnit.SECONDS); // one made already: open to every session

            alice.connect().get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 4; i++) {
                alice.subscribe("views/#", SubscribeOptions.builder().filter("bid > " + i).build(), new Recorded())
                        .confirmed().get(10, TimeUnit.SECONDS);
            }
            assertThat(MetricSampler.metric(shared, "ringcast_views")).as("views served").isEqualTo(8);
            witness.stopAndVerifyWithin(100);
        }
    }

    @Test
    void badOptionsAreRefusedWithInvalidOptionsNamingTheFaultAndTheSessionCarriesOn() throws Exception {
        try (RingcastClient c = connect()) {
            Recorded bad = new Recorded();
            Subscription refused = c.subscribe("views/#", SubscribeOptions.builder().filter("spread ~ 1").build(), bad);
            Throwable t = catchThrowable(() -> refused.confirmed().get(10, TimeUnit.SECONDS));
            assertThat(t).isInstanceOf(ExecutionException.class).cause().isInstanceOf(RingcastException.class);
            RingcastException e = (RingcastException) t.getCause();
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_OPTIONS);
            assertThat(e.getMessage()).contains("filter: ").contains("column 8");

            Recorded good = new Recorded();
            c.subscribe("views/after", QUOTE, good).confirmed().get(10, TimeUnit.SECONDS);
            long s = publish("views/after", quote(1, 1));
            Await.until(() -> good.lastSequence("views/after") == s, "the next subscription on the same session");
        }
    }
}
