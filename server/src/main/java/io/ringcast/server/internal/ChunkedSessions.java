package io.ringcast.server.internal;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The sessions of one event loop in a {@link SubscriberSet}, ascending by id, kept in chunks of at
 * most {@link #MAX_CHUNK}. Immutable. A set one session larger or smaller shares every chunk but
 * one with this one, so a change copies a chunk and the chunk index, not every session: with one
 * flat array, 10,000 clients subscribing to {@code #} one after another copied 50 million
 * references per pass over the topics' sets (a streamed reply makes several), and a node with
 * 1,000 topics spent 8.8 s of its sequencer on the 10,000 and 27 s on 19,000.
 *
 * <p>A poller reads the chunks in order ({@link #chunks}); everything else runs on the sequencer
 * thread, through {@link SubscriberSet}.
 */
final class ChunkedSessions implements Iterable<Session> {
    /** What {@link #of} and a split make. */
    static final int CHUNK = 64;
    /** A chunk that would grow past this splits in two. */
    static final int MAX_CHUNK = 2 * CHUNK;
    static final ChunkedSessions NONE = new ChunkedSessions(new Session[0][], 0);
    /** The order of a loop's sessions, everywhere a set keeps them. */
    static final Comparator<Session> BY_ID = Comparator.comparingLong(s -> s.id);

    /** Non-empty, each ascending, every id of one below every id of the next. */
    private final Session[][] chunks;
    private final int size;

    private ChunkedSessions(Session[][] chunks, int size) {
        this.chunks = chunks;
        this.size = size;
    }

    /** These sessions, already ascending by id and distinct (the array is not kept). */
    static ChunkedSessions of(Session[] ascending) {
        if (ascending.length == 0) {
            return NONE;
        }
        Session[][] chunks = new Session[(ascending.length + CHUNK - 1) / CHUNK][];
        for (int c = 0; c < chunks.length; c++) {
            chunks[c] = Arrays.copyOfRange(ascending, c * CHUNK, Math.min(ascending.length, (c + 1) * CHUNK));
        }
        return new ChunkedSessions(chunks, ascending.length);
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The chunks, in order: a poller's two nested loops. Neither the array nor a chunk may be modified. */
    Session[][] chunks() {
        return chunks;
    }

    /** The session with the lowest id. Not empty. */
    Session first() {
        return chunks[0][0];
    }

    boolean contains(Session session) {
        if (size == 0) {
            return false;
        }
        Session[] last = chunks[chunks.length - 1];
        // a session newer than every member, as one that subscribes is: no search
        return session.id <= last[last.length - 1].id && indexOf(chunks[chunkOf(session)], session.id) >= 0;
    }

    /** These sessions and {@code session}: this when it is here already. */
    ChunkedSessions with(Session session) {
        if (size == 0) {
            return new ChunkedSessions(new Session[][] {{session}}, 1);
        }
        int c = chunkOf(session);
        Session[] old = chunks[c];
        int at = indexOf(old, session.id);
        if (at >= 0) {
            return this;
        }
        at = -at - 1;
        Session[] grown = new Session[old.length + 1];
        System.arraycopy(old, 0, grown, 0, at);
        grown[at] = session;
        System.arraycopy(old, at, grown, at + 1, old.length - at);
        if (grown.length <= MAX_CHUNK) {
            Session[][] index = chunks.clone();
            index[c] = grown;
            return new ChunkedSessions(index, size + 1);
        }
        Session[][] index = new Session[chunks.length + 1][];
        System.arraycopy(chunks, 0, index, 0, c);
        index[c] = Arrays.copyOfRange(grown, 0, grown.length / 2);
        index[c + 1] = Arrays.copyOfRange(grown, grown.length / 2, grown.length);
        System.arraycopy(chunks, c + 1, index, c + 2, chunks.length - c - 1);
        return new ChunkedSessions(index, size + 1);
    }

    /**
     * These sessions without {@code session}: this when it is not here. A chunk left with fewer
     * than half of {@link #CHUNK} joins the next when both fit in one, so that clients leaving
     * leave no trail of tiny chunks.
     */
    ChunkedSessions without(Session session) {
        if (size == 0) {
            return this;
        }
        int c = chunkOf(session);
        Session[] old = chunks[c];
        int at = indexOf(old, session.id);
        if (at < 0) {
            return this;
        }
        if (size == 1) {
            return NONE;
        }
        if (old.length == 1) {
            Session[][] index = new Session[chunks.length - 1][];
            System.arraycopy(chunks, 0, index, 0, c);
            System.arraycopy(chunks, c + 1, index, c, chunks.length - c - 1);
            return new ChunkedSessions(index, size - 1);
        }
        boolean merge = old.length - 1 < CHUNK / 2 && c + 1 < chunks.length
                && old.length - 1 + chunks[c + 1].length <= CHUNK;
        Session[] next = merge ? chunks[c + 1] : new Session[0];
        Session[] shrunk = new Session[old.length - 1 + next.length];
        System.arraycopy(old, 0, shrunk, 0, at);
        System.arraycopy(old, at + 1, shrunk, at, old.length - at - 1);
        System.arraycopy(next, 0, shrunk, old.length - 1, next.length);
        Session[][] index;
        if (merge) {
            index = new Session[chunks.length - 1][];
            System.arraycopy(chunks, 0, index, 0, c);
            System.arraycopy(chunks, c + 2, index, c + 1, chunks.length - c - 2);
        } else {
            index = chunks.clone();
        }
        index[c] = shrunk;
        return new ChunkedSessions(index, size - 1);
    }

    /** The chunk {@code session} is in or belongs in: the first whose last id is not below its id, else the last. Not empty. */
    private int chunkOf(Session session) {
        int lo = 0;
        int hi = chunks.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            Session[] chunk = chunks[mid];
            if (chunk[chunk.length - 1].id < session.id) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * Where the session of {@code id} is in {@code chunk}, or {@code -(insertion point) - 1}:
     * {@link Arrays#binarySearch}'s answer, on the ids themselves (the sequencer asks it for every
     * topic a subscription joins).
     */
    private static int indexOf(Session[] chunk, long id) {
        int lo = 0;
        int hi = chunk.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long midId = chunk[mid].id;
            if (midId < id) {
                lo = mid + 1;
            } else if (midId > id) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }

    /** The same sessions (identity) in the same order, however they are cut into chunks; a chunk both share is not looked into. */
    boolean sameSessions(ChunkedSessions other) {
        if (this == other) {
            return true;
        }
        if (size != other.size) {
            return false;
        }
        Session[][] y = other.chunks;
        int c = 0;
        int i = 0;
        int d = 0;
        int j = 0;
        while (c < chunks.length) {
            if (i == 0 && j == 0 && chunks[c] == y[d]) {
                c++;
                d++;
                continue;
            }
            if (chunks[c][i] != y[d][j]) {
                return false;
            }
            if (++i == chunks[c].length) {
                c++;
                i = 0;
            }
            if (++j == y[d].length) {
                d++;
                j = 0;
            }
        }
        return true;
    }

    /** In order of id. For the sequencer's loops over a set's members; a poller reads {@link #chunks}. */
    @Override
    public Iterator<Session> iterator() {
        return new Iterator<>() {
            private int c;
            private int i;

            @Override
            public boolean hasNext() {
                return c < chunks.length;
            }

            @Override
            public Session next() {
                if (c >= chunks.length) {
                    throw new NoSuchElementException();
                }
                Session s = chunks[c][i];
                if (++i == chunks[c].length) {
                    c++;
                    i = 0;
                }
                return s;
            }
        };
    }
}
