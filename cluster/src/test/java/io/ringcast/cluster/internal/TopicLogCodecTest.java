package io.ringcast.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ringcast.log.PublishResult;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

class TopicLogCodecTest {

    static List<LoggedPublish> sampleBatch() {
        byte[] big = new byte[70_000];
        Arrays.fill(big, (byte) 7);
        return List.of(
                new LoggedPublish("principal 'ann'", 0x0123456789ABCDEFL, 1, false, "fx/EURUSD", bytes("1.0842")),
                new LoggedPublish("principal 'ann'", 0x0123456789ABCDEFL, 2, false, "fx/EURUSD", bytes("1.0843")),
                new LoggedPublish("principal 'ann'", 0x0123456789ABCDEFL, 3, true, "fx/GBPUSD", new byte[0]),
                new LoggedPublish(null, 0, 42, false, "news/ünïcödé/€", bytes("ünïcode value")),
                new LoggedPublish("anonymous", -1L, Integer.MIN_VALUE, true, "fx/EURUSD", big),
                new LoggedPublish("anonymous", Long.MIN_VALUE, Integer.MAX_VALUE, false, "a", bytes("x")),
                new LoggedPublish("principal 'ann'", 5, -1, false, "fx/EURUSD", bytes("y")),
                new LoggedPublish("principal 'ann'", 5, 0x5E55_1011L, 1, 7, false, "fx/EURUSD", bytes("z")),
                new LoggedPublish("principal 'ann'", 5, Long.MIN_VALUE, Long.MAX_VALUE, 8, true, "fx/EURUSD", bytes("w")));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aBatchSurvivesTheRoundTripInOrder() throws Exception {
        List<LoggedPublish> batch = sampleBatch();
        byte[] entry = TopicLogCodec.encodeEntry(batch);
        assertThat(TopicLogCodec.decodeEntry(entry, 0, entry.length)).containsExactlyElementsOf(batch);

        // inside a larger array, as the engine hands it over
        byte[] framed = new byte[entry.length + 13];
        System.arraycopy(entry, 0, framed, 5, entry.length);
        assertThat(TopicLogCodec.decodeEntry(framed, 5, entry.length)).containsExactlyElementsOf(batch);
    }

    @Test
    void aPublishWithoutPublisherIdCarriesNoPrincipal() {
        LoggedPublish p = new LoggedPublish("principal 'ann'", 0, 1, false, "a/b", new byte[0]);
        assertThat(p.principal()).isNull();
        assertThat(p.hasPublisher()).isFalse();
        assertThatThrownBy(() -> new LoggedPublish(null, 9, 1, false, "a/b", new byte[0]))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("principal");
    }

    @Test
    void repeatedPrincipalsAndPathsAreWrittenOnce() {
        String principal = "principal 'a rather long login name'";
        String path = "prices/equities/XLON/VOD.L/bid";
        List<LoggedPublish> batch = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            batch.add(new LoggedPublish(principal, 77, i, false, path, new byte[10]));
        }
        int entry = TopicLogCodec.encodeEntry(batch).length;
        // per publish: flags 1, publisher id 8, principal ref 1, correlation id 1-2, path ref 1, value 1 + 10
        assertThat(entry).isLessThan(2 + principal.length() + path.length() + 100 * 24);
    }

    @Test
    void everyCutOfAnEntryIsRefused() {
        byte[] entry = TopicLogCodec.encodeEntry(sampleBatch().subList(0, 6).stream()
                .map(p -> p.value().length > 1000 ? new LoggedPublish(p.principal(), p.publisherId(), p.correlationId(),
                        p.republish(), p.path(), new byte[300]) : p).toList());
        for (int cut = 0; cut < entry.length; cut++) {
            int length = cut;
            assertThatThrownBy(() -> TopicLogCodec.decodeEntry(entry, 0, length)).as("cut at %d", cut)
                    .isInstanceOf(MalformedEntryException.class).hasMessageContaining("malformed entry");
        }
        byte[] longer = Arrays.copyOf(entry, entry.length + 1);
        assertThatThrownBy(() -> TopicLogCodec.decodeEntry(longer, 0, longer.length))
                .isInstanceOf(MalformedEntryException.class).hasMessageContaining("1 bytes left over");
    }

    @Test
    void malformedEntriesAreRefusedNamingTheProblem() {
        byte[] good = TopicLogCodec.encodeEntry(List.of(new LoggedPublish("p", 9, 1, false, "a/b", bytes("v"))));
        assertRefused(with(good, 0, 5), "unknown entry format 5");
        assertRefused(new byte[] {1, 0}, "an entry of no record");
        assertRefused(new byte[] {1, 100, 0, 0, 0, 0, 0}, "records: 100 do not fit");
        assertRefused(with(good, 2, 8 | 2), "unknown flags 0xa");
        assertRefused(with(with(good, 0, 1), 2, 4 | 2), "unknown flags 0x6"); // format 1 had no sessions
        assertRefused(new byte[] {2, 1, 4, 0, 0, 0, 0, 0, 0, 0, 1, 1}, "a session without a publisher id");
        byte[] withSession = TopicLogCodec.encodeEntry(List.of(new LoggedPublish("p", 9, 3, 1, 1, false, "a/b",
                bytes("v"))));
        assertRefused(with(withSession, 21, 0), "session 0 with sequence 1"); // the session's last byte: 3 -> 0
        assertRefused(with(withSession, 22, 0), "session 3 with sequence 0");
        byte[] zeroId = with(good, 10, 0); // the publisher id's last byte: 9 -> 0
        assertRefused(zeroId, "publisher id 0 flagged as given");
        assertRefused(new byte[] {1, 1, 0, 1, 5, 0}, "reference 5 to one of 0 strings");
        assertRefused(new byte[] {1, 1, 0, 1, 0, 0, 0}, "empty path");
        assertRefused(new byte[] {1, 1, 0, 1, 0, 2, (byte) 0xC3, (byte) 0x28, 0}, "malformed UTF-8 in path");
        assertRefused(new byte[] {1, 1, 0, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10, 0, 1, 'a', 0},
                "beyond 32 bits");
        assertRefused(new byte[] {1, 1, 0, 1, 0, 1, 'a', 9}, "length of value of publish 0: 9 do not fit");
        assertThatThrownBy(() -> TopicLogCodec.decodeEntry(good, 3, good.length))
                .isInstanceOf(MalformedEntryException.class).hasMessageContaining("outside");
        assertThatThrownBy(() -> TopicLogCodec.encodeEntry(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anEntryOfTheFormatBeforeSessionsIsStillRead() throws Exception {
        // written by a node of the version before sessions: format 1, flags without bit 2
        byte[] entry = {1, 2, 2, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 'p', 5, 0, 3, 'a', '/', 'b', 1, 'v', 0, 6, 1, 1, 'w'};
        assertThat(TopicLogCodec.decodeEntry(entry, 0, entry.length)).containsExactly(
                new LoggedPublish("p", 9, 5, false, "a/b", bytes("v")),
                new LoggedPublish(null, 0, 6, false, "a/b", bytes("w")));
    }

    @Test
    void removalsSurviveTheRoundTripInOrderAmongThePublishes() throws Exception {
        List<LoggedRecord> batch = new ArrayList<>();
        List<LoggedPublish> publishes = sampleBatch();
        for (int i = 0; i < publishes.size(); i++) {
            batch.add(publishes.get(i));
            if (i % 3 == 1) {
                batch.add(new LoggedRemoval(publishes.get(i).path(), i)); // a path met before: a reference
            }
        }
        batch.add(0, new LoggedRemoval("only/removed/ünï", 0)); // first, and a path of its own
        batch.add(new LoggedRemoval("a", Long.MAX_VALUE));
        byte[] entry = TopicLogCodec.encodeEntry(batch);
        assertThat(entry[0]).as("an entry that holds a removal is format 3").isEqualTo((byte) 3);
        assertThat(TopicLogCodec.decodeEntry(entry, 0, entry.length)).containsExactlyElementsOf(batch);
        byte[] framed = new byte[entry.length + 9];
        System.arraycopy(entry, 0, framed, 4, entry.length);
        assertThat(TopicLogCodec.decodeEntry(framed, 4, entry.length)).containsExactlyElementsOf(batch);

        List<LoggedRecord> removalsAlone = List.of(new LoggedRemoval("x", 0), new LoggedRemoval("x", 7));
        byte[] alone = TopicLogCodec.encodeEntry(removalsAlone);
        assertThat(TopicLogCodec.decodeEntry(alone, 0, alone.length)).containsExactlyElementsOf(removalsAlone);
    }

    /** The bytes of both formats written today, pinned: a change of either is a decision, not an accident. */
    @Test
    void anEntryOfPublishesAloneIsStillFormat2ByteForByteAndOneWithARemovalIsFormat3() throws Exception {
        List<LoggedRecord> publishes = List.of(new LoggedPublish("p", 9, 5, false, "a/b", bytes("v")),
                new LoggedPublish(null, 0, 6, false, "a/b", bytes("w")));
        byte[] format2 = {2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 'p', 5, 0, 3, 'a', '/', 'b', 1, 'v', 0, 6, 1, 1, 'w'};
        assertThat(TopicLogCodec.encodeEntry(publishes)).isEqualTo(format2);

        List<LoggedRecord> withRemovals = List.of(new LoggedRemoval("a/b", 0),
                new LoggedPublish(null, 0, 0, false, "a/b", bytes("v")), new LoggedRemoval("a/b", 300));
        byte[] format3 = {3, 3, 8, 0, 3, 'a', '/', 'b', 0, 0, 0, 1, 1, 'v', 8, 1, (byte) 0xAC, 0x02};
        assertThat(TopicLogCodec.encodeEntry(withRemovals)).isEqualTo(format3);
        assertThat(TopicLogCodec.decodeEntry(format3, 0, format3.length)).containsExactlyElementsOf(withRemovals);
    }

    /** Written only by a node past its heap mark, so that a node of the previous release reads every other entry. */
    @Test
    void aPublishToAnExistingTopicOnlyIsFormat4AndSurvivesTheRoundTrip() throws Exception {
        List<LoggedRecord> mixed = List.of(new LoggedPublish(null, 0, 0, 0, 0, false, "a/b", bytes("v"), true),
                new LoggedPublish(null, 0, 0, 0, 1, false, "a/b", bytes("w"), false));
        byte[] format4 = {4, 2, 16, 0, 0, 3, 'a', '/', 'b', 1, 'v', 0, 1, 1, 1, 'w'};
        assertThat(TopicLogCodec.encodeEntry(mixed)).isEqualTo(format4);
        assertThat(TopicLogCodec.decodeEntry(format4, 0, format4.length)).containsExactlyElementsOf(mixed);
        List<LoggedRecord> withRemoval = List.of(new LoggedRemoval("a/b", 0),
                new LoggedPublish("p", 9, 3, 1, 7, true, "a/c", bytes("x"), true));
        byte[] entry = TopicLogCodec.encodeEntry(withRemoval);
        assertThat(entry[0]).isEqualTo((byte) 4);
        assertThat(TopicLogCodec.decodeEntry(entry, 0, entry.length)).containsExactlyElementsOf(withRemoval);
        assertRefused(new byte[] {4, 1, 8 | 16, 0, 1, 'a', 0}, "a removal with flags 0x18");
        assertRefused(new byte[] {4, 1, 32, 0, 1, 'a', 0}, "unknown flags 0x20");
    }

    @Test
    void everyCutOfAnEntryWithRemovalsIsRefused() {
        byte[] entry = TopicLogCodec.encodeEntry(List.of(new LoggedPublish("p", 9, 1, false, "a/b", bytes("v")),
                new LoggedRemoval("a/b", 1L << 40), new LoggedRemoval("c", 0)));
        for (int cut = 0; cut < entry.length; cut++) {
            int length = cut;
            assertThatThrownBy(() -> TopicLogCodec.decodeEntry(entry, 0, length)).as("cut at %d", cut)
                    .isInstanceOf(MalformedEntryException.class).hasMessageContaining("malformed entry");
        }
    }

    @Test
    void malformedRemovalsAreRefusedNamingTheProblem() {
        assertRefused(new byte[] {3, 1, 8 | 2, 0, 1, 'a', 0}, "a removal with flags 0xa in record 0");
        assertRefused(new byte[] {3, 1, 8 | 1, 0, 1, 'a', 0}, "a removal with flags 0x9");
        assertRefused(new byte[] {2, 1, 8, 0, 1, 'a', 0}, "unknown flags 0x8"); // format 2 had no removals
        assertRefused(new byte[] {3, 1, 16, 0, 1, 'a', 0}, "unknown flags 0x10");
        assertRefused(new byte[] {3, 1, 8, 0, 0, 0}, "empty path in removal 0");
        assertRefused(new byte[] {3, 1, 8, 2, 0}, "path of removal 0: reference 2 to one of 0 strings");
        assertRefused(new byte[] {3, 1, 8, 0, 1, 'a', (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF,
                (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x01}, "beyond 63 bits in removal 0");
        assertRefused(new byte[] {3, 100, 8, 0, 1, 'a', 0}, "records: 100 do not fit");
        assertRefused(new byte[] {3, 0}, "an entry of no record");
        assertThatThrownBy(() -> new LoggedRemoval("", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LoggedRemoval("a", -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("negative");
    }

    private static byte[] with(byte[] b, int index, int value) {
        byte[] copy = b.clone();
        copy[index] = (byte) value;
        return copy;
    }

    private static void assertRefused(byte[] entry, String problem) {
        assertThatThrownBy(() -> TopicLogCodec.decodeEntry(entry, 0, entry.length))
                .isInstanceOf(MalformedEntryException.class).hasMessageContaining(problem);
    }

    @Test
    void responsesSurviveTheRoundTrip() throws Exception {
        List<PublishResult> results = List.of(PublishResult.applied(1), PublishResult.applied(Long.MAX_VALUE),
                PublishResult.alreadyApplied(300), PublishResult.conflict("fx/ünï"), PublishResult.OUTCOME_UNKNOWN,
                PublishResult.TOO_MANY_TOPICS, PublishResult.OUT_OF_ORDER);
        EntryResponse decoded = TopicLogCodec.decodeResponse(TopicLogCodec.encodeResults(1L << 40, results));
        assertThat(decoded.isRefused()).isFalse();
        assertThat(decoded.ordinal()).isEqualTo(1L << 40);
        assertThat(decoded.results()).containsExactlyElementsOf(results);
        assertThat(decoded.results()).extracting(PublishResult::acked).containsExactly(true, true, true, false, false, false,
                false);

        EntryResponse refused = TopicLogCodec.decodeResponse(TopicLogCodec.encodeRefusal("bad entry: ünï"));
        assertThat(refused.isRefused()).isTrue();
        assertThat(refused.refusal()).isEqualTo("bad entry: ünï");
        assertThat(refused.results()).isEmpty();
    }

    @Test
    void everyCutOfAResponseIsRefused() {
        for (byte[] response : List.of(TopicLogCodec.encodeResults(300, List.of(PublishResult.applied(1_000_000),
                        PublishResult.conflict("a/b"), PublishResult.alreadyApplied(2), PublishResult.OUTCOME_UNKNOWN)),
                TopicLogCodec.encodeRefusal("why"))) {
            for (int cut = 0; cut < response.length; cut++) {
                byte[] cutResponse = Arrays.copyOf(response, cut);
                assertThatThrownBy(() -> TopicLogCodec.decodeResponse(cutResponse)).as("cut at %d", cut)
                        .isInstanceOf(MalformedEntryException.class).hasMessageContaining("malformed response");
            }
        }
        assertThatThrownBy(() -> TopicLogCodec.decodeResponse(new byte[] {1, 7, 1, 9}))
                .isInstanceOf(MalformedEntryException.class).hasMessageContaining("unknown outcome 9");
        assertThatThrownBy(() -> TopicLogCodec.decodeResponse(new byte[] {1, 0, 1, 1, 1}))
                .isInstanceOf(MalformedEntryException.class).hasMessageContaining("ordinal 0");
        assertThatThrownBy(() -> TopicLogCodec.decodeResponse(new byte[] {3}))
                .isInstanceOf(MalformedEntryException.class).hasMessageContaining("unknown response kind 3");
    }

    @Test
    void aResponseWriterInsistsOnOneResultPerPublish() {
        TopicLogCodec.ResponseWriter w = new TopicLogCodec.ResponseWriter().start(1, 2);
        w.add(PublishResult.applied(1));
        assertThatThrownBy(w::toBytes).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("1 results written for an entry of 2");
    }
}
