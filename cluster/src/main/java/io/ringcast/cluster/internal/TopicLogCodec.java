package io.ringcast.cluster.internal;

import io.ringcast.log.PublishResult;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes and reads the bytes of a group's log ({@link TopicLog}): entries (a batch of publishes and
 * removals), the responses to them, and the pieces of a snapshot.
 *
 * <p><b>Entry</b> (format 4):
 * <pre>
 * u8     format = 4
 * varint count of records (at least 1)
 * count times, a publish or a removal, told apart by their flags:
 *   u8     flags: bit 0 REPUBLISH, bit 1 has a publisher id, bit 2 has a session (only with bit 1),
 *          bit 3 REMOVAL (alone), bit 4 EXISTING_TOPIC_ONLY ({@link LoggedPublish#existingTopicOnly});
 *          no other bit may be set
 *   a publish (bit 3 clear):
 *     [i64   publisher id, big endian, non-zero;  string-ref principal]   only with bit 1
 *     [i64   session, non-zero;  varint session sequence, at least 1]    only with bit 2
 *     varint correlation id (the int's 32 bits, unsigned)
 *     string-ref path (not empty)
 *     varint value length, then the value's bytes
 *   a removal (flags exactly bit 3: no publisher id, no ledger):
 *     string-ref path (not empty)
 *     varint ifLastSequence: remove the topic only if its last sequence is this one; 0: whatever it is
 * </pre>
 * Format 3 is format 4 without bit 4, format 2 is format 3 without removals (bit 3), and format 1, written before sessions were logged,
 * format 2 without bit 2: both still read, so a log written by an older node is applied the same. An
 * entry of publishes alone is still written as format 2, byte for byte as before removals, so that a
 * node of the previous release reads it during a rolling upgrade; only an entry that holds a removal
 * is format 3, and only an entry that holds a publish to an existing topic only (written by a node
 * past its heap mark) is format 4. A <em>string-ref</em> is {@code varint 0} then {@code varint length} and the UTF-8
 * bytes for a string new to the entry, or {@code varint k} for the k-th new string of its kind
 * (principals and paths are counted apart; a removal's path is a path like a publish's) met earlier
 * in the entry, so a batch of one publisher's updates to a few topics names each once. A varint is
 * unsigned LEB128 (7 bits a byte, low first).
 *
 * <p><b>Response</b>: {@code u8 1}, {@code varint ordinal} (the entry's place among the entries the
 * log applied, 1 for the first: {@link TopicLog#appliedEntries}, the same on every node),
 * {@code varint count}, then per record in the entry's order {@code u8} its
 * {@link PublishResult.Outcome#code}, followed by {@code varint sequence} for APPLIED and
 * ALREADY_APPLIED, or by {@code varint length} and the UTF-8 first path for CONFLICT; or
 * {@code u8 2}, {@code varint length} and the UTF-8 reason, for a refused entry. A removal's result
 * is APPLIED, with the removed topic's last sequence, or 0 when it removed nothing.
 *
 * <p>Anything else is refused with a {@link MalformedEntryException} naming the problem and its
 * byte offset: a cut, a length past the end, a bad flag or format, malformed UTF-8, bytes left over.
 * Stateless; safe on any thread.
 */
final class TopicLogCodec {
    static final int ENTRY_FORMAT = 4;
    /** Entries without bit 4 (a publish to an existing topic only): still written for an entry without one. */
    static final int ENTRY_FORMAT_WITHOUT_EXISTING_ONLY = 3;
    /** Entries without removals: still written for an entry of publishes alone (see the class comment). */
    static final int ENTRY_FORMAT_WITHOUT_REMOVALS = 2;
    /** Entries without sessions ({@link LoggedPublish#session}), still read. */
    static final int ENTRY_FORMAT_WITHOUT_SESSIONS = 1;
    static final int RESPONSE_RESULTS = 1;
    static final int RESPONSE_REFUSED = 2;

    private static final int FLAG_REPUBLISH = 1;
    private static final int FLAG_PUBLISHER = 2;
    private static final int FLAG_SESSION = 4;
    private static final int FLAG_REMOVAL = 8;
    private static final int FLAG_EXISTING_TOPIC_ONLY = 16;
    /** The fewest bytes a publish takes (flags, correlation id, path ref, value length): bounds a count read. */
    private static final int MIN_PUBLISH_BYTES = 4;
    /** The fewest bytes a removal takes (flags, path ref, ifLastSequence). */
    private static final int MIN_REMOVAL_BYTES = 3;

    private TopicLogCodec() {
    }

    // ---------------------------------------------------------------- entries

    /** The entry carrying {@code records}, publishes and removals, in order. */
    public static byte[] encodeEntry(List<? extends LoggedRecord> records) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("an entry carries at least one record");
        }
        boolean removes = false;
        boolean existingOnly = false;
        for (LoggedRecord r : records) {
            removes |= r instanceof LoggedRemoval;
            existingOnly |= r instanceof LoggedPublish p && p.existingTopicOnly();
        }
        EntryWriter out = new EntryWriter(64 + records.size() * 32);
        out.u8(existingOnly ? ENTRY_FORMAT : removes ? ENTRY_FORMAT_WITHOUT_EXISTING_ONLY : ENTRY_FORMAT_WITHOUT_REMOVALS);
        out.varLong(records.size());
        Map<String, Integer> principals = new HashMap<>();
        Map<String, Integer> paths = new HashMap<>();
        for (LoggedRecord r : records) {
            if (r instanceof LoggedRemoval removal) {
                out.u8(FLAG_REMOVAL);
                out.stringRef(removal.path(), paths);
                out.varLong(removal.ifLastSequence());
                continue;
            }
            LoggedPublish p = (LoggedPublish) r;
            out.u8((p.republish() ? FLAG_REPUBLISH : 0) | (p.hasPublisher() ? FLAG_PUBLISHER : 0)
                    | (p.hasSession() ? FLAG_SESSION : 0) | (p.existingTopicOnly() ? FLAG_EXISTING_TOPIC_ONLY : 0));
            if (p.hasPublisher()) {
                out.i64(p.publisherId());
                out.stringRef(p.principal(), principals);
            }
            if (p.hasSession()) {
                out.i64(p.session());
                out.varLong(p.sessionSequence());
            }
            out.varLong(Integer.toUnsignedLong(p.correlationId()));
            out.stringRef(p.path(), paths);
            out.varLong(p.value().length);
            out.bytes(p.value());
        }
        return out.toBytes();
    }

    /** The records of an entry, in order; every value is a copy of its own. */
    public static List<LoggedRecord> decodeEntry(byte[] data, int offset, int length) throws MalformedEntryException {
        EntryReader in = new EntryReader(data, offset, length, "entry");
        int format = in.u8("format");
        if (format != ENTRY_FORMAT && format != ENTRY_FORMAT_WITHOUT_EXISTING_ONLY && format != ENTRY_FORMAT_WITHOUT_REMOVALS
                && format != ENTRY_FORMAT_WITHOUT_SESSIONS) {
            throw in.malformed("unknown entry format " + format);
        }
        int knownFlags = FLAG_REPUBLISH | FLAG_PUBLISHER | (format >= ENTRY_FORMAT_WITHOUT_REMOVALS ? FLAG_SESSION : 0)
                | (format >= ENTRY_FORMAT_WITHOUT_EXISTING_ONLY ? FLAG_REMOVAL : 0)
                | (format >= ENTRY_FORMAT ? FLAG_EXISTING_TOPIC_ONLY : 0);
        int count = in.count("records", format >= ENTRY_FORMAT_WITHOUT_EXISTING_ONLY ? MIN_REMOVAL_BYTES : MIN_PUBLISH_BYTES);
        if (count == 0) {
            throw in.malformed("an entry of no record");
        }
        List<LoggedRecord> records = new ArrayList<>(count);
        List<String> principals = new ArrayList<>();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int flags = in.u8("flags of record " + i);
            if ((flags & ~knownFlags) != 0) {
                throw in.malformed("unknown flags 0x" + Integer.toHexString(flags) + " in record " + i);
            }
            if ((flags & FLAG_REMOVAL) != 0) {
                records.add(removal(in, flags, i, paths));
            } else {
                records.add(publish(in, flags, i, principals, paths));
            }
        }
        in.end();
        return records;
    }

    private static LoggedRemoval removal(EntryReader in, int flags, int i, List<String> paths)
            throws MalformedEntryException {
        if (flags != FLAG_REMOVAL) {
            throw in.malformed("a removal with flags 0x" + Integer.toHexString(flags) + " in record " + i
                    + " (a removal has no other flag)");
        }
        String path = in.stringRef("path of removal " + i, paths);
        if (path.isEmpty()) {
            throw in.malformed("empty path in removal " + i);
        }
        long ifLastSequence = in.varLong("ifLastSequence of removal " + i);
        if (ifLastSequence < 0) {
            throw in.malformed("ifLastSequence " + Long.toUnsignedString(ifLastSequence) + " beyond 63 bits in removal "
                    + i);
        }
        return new LoggedRemoval(path, ifLastSequence);
    }

    private static LoggedPublish publish(EntryReader in, int flags, int i, List<String> principals, List<String> paths)
            throws MalformedEntryException {
        if ((flags & FLAG_SESSION) != 0 && (flags & FLAG_PUBLISHER) == 0) {
            throw in.malformed("a session without a publisher id in publish " + i);
        }
        long publisherId = 0;
        String principal = null;
        if ((flags & FLAG_PUBLISHER) != 0) {
            publisherId = in.i64("publisher id of publish " + i);
            if (publisherId == 0) {
                throw in.malformed("publisher id 0 flagged as given in publish " + i);
            }
            principal = in.stringRef("principal of publish " + i, principals);
        }
        long session = 0;
        long sessionSequence = 0;
        if ((flags & FLAG_SESSION) != 0) {
            session = in.i64("session of publish " + i);
            sessionSequence = in.varLong("session sequence of publish " + i);
            if (session == 0 || sessionSequence < 1) {
                throw in.malformed("session " + session + " with sequence " + sessionSequence
                        + " in publish " + i + " (both must be non-zero)");
            }
        }
        long correlationId = in.varLong("correlation id of publish " + i);
        if (correlationId > 0xFFFF_FFFFL) {
            throw in.malformed("correlation id " + correlationId + " beyond 32 bits in publish " + i);
        }
        String path = in.stringRef("path of publish " + i, paths);
        if (path.isEmpty()) {
            throw in.malformed("empty path in publish " + i);
        }
        byte[] value = in.bytes("value of publish " + i);
        return new LoggedPublish(principal, publisherId, session, sessionSequence, (int) correlationId,
                (flags & FLAG_REPUBLISH) != 0, path, value, (flags & FLAG_EXISTING_TOPIC_ONLY) != 0);
    }

    // ---------------------------------------------------------------- responses

    /** Writes a response, one result at a time, in the entry's order. Not thread-safe; reusable after {@link #toBytes}. */
    public static final class ResponseWriter {
        private final EntryWriter out = new EntryWriter(64);
        private int expected;
        private int written;

        /** Starts the response to the {@code ordinal}-th entry applied, of {@code count} records. */
        public ResponseWriter start(long ordinal, int count) {
            out.reset();
            out.u8(RESPONSE_RESULTS);
            out.varLong(ordinal);
            out.varLong(count);
            expected = count;
            written = 0;
            return this;
        }

        public void add(PublishResult r) {
            switch (r.outcome()) {
                case APPLIED, ALREADY_APPLIED -> sequenced(r.outcome(), r.sequence());
                case CONFLICT -> conflict(r.firstPath());
                default -> outcome(r.outcome());
            }
        }

        void sequenced(PublishResult.Outcome outcome, long sequence) {
            outcome(outcome);
            out.varLong(sequence);
        }

        void conflict(String firstPath) {
            outcome(PublishResult.Outcome.CONFLICT);
            out.string(firstPath);
        }

        void outcome(PublishResult.Outcome outcome) {
            written++;
            out.u8(outcome.code());
        }

        public byte[] toBytes() {
            if (written != expected) {
                throw new IllegalStateException(written + " results written for an entry of " + expected + " records");
            }
            return out.toBytes();
        }
    }

    /** The response to the {@code ordinal}-th entry applied, whose records got {@code results}, in order. */
    public static byte[] encodeResults(long ordinal, List<PublishResult> results) {
        ResponseWriter w = new ResponseWriter().start(ordinal, results.size());
        results.forEach(w::add);
        return w.toBytes();
    }

    /** The response to an entry refused as a whole, saying why. */
    public static byte[] encodeRefusal(String why) {
        EntryWriter out = new EntryWriter(16 + why.length());
        out.u8(RESPONSE_REFUSED);
        out.string(why);
        return out.toBytes();
    }

    /** A response, as the node that submitted the entry reads it. */
    public static EntryResponse decodeResponse(byte[] data) throws MalformedEntryException {
        EntryReader in = new EntryReader(data, 0, data.length, "response");
        int kind = in.u8("kind");
        if (kind == RESPONSE_REFUSED) {
            String why = in.string("reason");
            in.end();
            return EntryResponse.refused(why);
        }
        if (kind != RESPONSE_RESULTS) {
            throw in.malformed("unknown response kind " + kind);
        }
        long ordinal = in.varLong("ordinal");
        if (ordinal < 1) {
            throw in.malformed("ordinal " + Long.toUnsignedString(ordinal) + " of an applied entry");
        }
        int count = in.count("results", 1);
        List<PublishResult> results = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int code = in.u8("outcome of result " + i);
            PublishResult.Outcome outcome = PublishResult.Outcome.ofCode(code);
            if (outcome == null) {
                throw in.malformed("unknown outcome " + code + " in result " + i);
            }
            results.add(switch (outcome) {
                case APPLIED -> PublishResult.applied(in.varLong("sequence of result " + i));
                case ALREADY_APPLIED -> PublishResult.alreadyApplied(in.varLong("sequence of result " + i));
                case CONFLICT -> PublishResult.conflict(in.string("first path of result " + i));
                case OUTCOME_UNKNOWN -> PublishResult.OUTCOME_UNKNOWN;
                case TOO_MANY_TOPICS -> PublishResult.TOO_MANY_TOPICS;
                case OUT_OF_ORDER -> PublishResult.OUT_OF_ORDER;
            });
        }
        in.end();
        return new EntryResponse(ordinal, results, null);
    }
}
