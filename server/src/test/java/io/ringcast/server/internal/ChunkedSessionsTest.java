package io.ringcast.server.internal;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A loop's sessions in chunks behave as one sorted set of sessions through any mix of joins and
 * leaves, and a change shares every chunk but the one it touched.
 */
@Timeout(30)
class ChunkedSessionsTest {
    private final EmbeddedChannel channel = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
    private final ChannelHandlerContext ctx = channel.pipeline().firstContext();

    @AfterEach
    void close() {
        channel.finishAndReleaseAll();
    }

    private Session session(long id) {
        return new Session(id, ctx, 0, false);
    }

    @Test
    void anyMixOfJoinsAndLeavesKeepsTheSessionsInOrderOfIdAsASortedSetWould() {
        Random random = new Random(42);
        List<Session> all = new ArrayList<>();
        for (int id = 0; id < 2_000; id++) {
            all.add(session(id));
        }
        TreeMap<Long, Session> model = new TreeMap<>();
        ChunkedSessions sessions = ChunkedSessions.NONE;
        for (int step = 0; step < 40_000; step++) {
            // joins outnumber leaves for the first half, then leaves win: sets grow to hundreds and shrink back
            boolean join = random.nextInt(100) < (step < 20_000 ? 70 : 30);
            Session s = all.get(random.nextInt(step < 10_000 ? 400 : all.size()));
            ChunkedSessions before = sessions;
            if (join) {
                sessions = sessions.with(s);
                assertThat(sessions == before).isEqualTo(model.put(s.id, s) != null);
            } else {
                sessions = sessions.without(s);
                assertThat(sessions == before).isEqualTo(model.remove(s.id) == null);
            }
            assertThat(sessions.size()).isEqualTo(model.size());
            assertThat(sessions.contains(s)).isEqualTo(join);
            if (step % 97 == 0) {
                assertThat(sessions).containsExactlyElementsOf(model.values());
                assertThat(sessions.sameSessions(ChunkedSessions.of(model.values().toArray(new Session[0])))).isTrue();
                for (Session[] chunk : sessions.chunks()) {
                    assertThat(chunk.length).isBetween(1, ChunkedSessions.MAX_CHUNK);
                }
            }
        }
        assertThat(sessions).containsExactlyElementsOf(model.values());
    }

    @Test
    void aSessionJoiningOrLeavingThousandsSharesEveryChunkButOne() {
        Session[] ascending = new Session[10_000];
        for (int i = 0; i < ascending.length; i++) {
            ascending[i] = session(2L * i);
        }
        ChunkedSessions before = ChunkedSessions.of(ascending);
        for (ChunkedSessions after : List.of(before.with(session(5_001)), before.with(session(1L << 40)),
                before.without(ascending[4_000]), before.without(ascending[0]))) {
            int shared = 0;
            for (Session[] chunk : after.chunks()) {
                for (Session[] old : before.chunks()) {
                    shared += chunk == old ? 1 : 0;
                }
            }
            assertThat(shared).isGreaterThanOrEqualTo(before.chunks().length - 2);
            assertThat(after.sameSessions(before)).isFalse();
        }
    }

    @Test
    void setsOfTheSameSessionsAreTheSameHoweverTheirChunksAreCut() {
        Session[] ascending = new Session[300];
        for (int i = 0; i < ascending.length; i++) {
            ascending[i] = session(i);
        }
        ChunkedSessions joinedOneByOne = ChunkedSessions.NONE;
        for (int i = ascending.length - 1; i >= 0; i--) {
            joinedOneByOne = joinedOneByOne.with(ascending[i]);
        }
        ChunkedSessions cut = ChunkedSessions.of(ascending);
        assertThat(joinedOneByOne.chunks().length).isNotEqualTo(cut.chunks().length);
        assertThat(joinedOneByOne.sameSessions(cut)).isTrue();
        assertThat(cut.sameSessions(joinedOneByOne)).isTrue();
        assertThat(cut.without(ascending[150]).sameSessions(joinedOneByOne.without(ascending[151]))).isFalse();
    }
}
