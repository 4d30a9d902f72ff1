package io.ringcast.cluster.internal;

import io.ringcast.cluster.SnapshotContent;
import io.ringcast.cluster.UpdateSink;
import io.ringcast.log.PublishResult;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the TopicLog tests share: a sink that records, a node's last values as snapshot content, and shorthands. */
public final class TopicLogTesting {

    private TopicLogTesting() {
    }

    /** One call of the sink's {@code apply}. */
    record Applied(String path, long sequence, String value) {
    }

    /** One call of the sink's {@code removed}. */
    record Removed(String path, long lastSequence) {
    }

    /**
     * Records every update handed to it, in order, with each update's incarnation beside it; and
     * every removal, also among the updates ({@link #events}).
     */
    public static final class RecordingSink implements UpdateSink {
        final List<Applied> applied = new ArrayList<>();
        /** Each update's incarnation, in the order of {@link #applied}. */
        final List<Integer> incarnations = new ArrayList<>();
        final List<Removed> removed = new ArrayList<>();
        /** Every call, in order: "apply path sequence #incarnation value", "removed path lastSequence". */
        final List<String> events = new ArrayList<>();

        @Override
        public void apply(String path, long topicSequence, int incarnation, byte[] value) {
            Applied a = new Applied(path, topicSequence, new String(value, StandardCharsets.UTF_8));
            applied.add(a);
            incarnations.add(incarnation);
            events.add("apply " + path + " " + topicSequence + " #" + incarnation + " " + a.value());
        }

        @Override
        public void removed(String path, long lastSequence, int incarnation) {
            removed.add(new Removed(path, lastSequence));
            events.add("removed " + path + " " + lastSequence);
        }

        /** The incarnation the last update of {@code path} came with; 0 if none came. */
        int lastIncarnation(String path) {
            for (int i = applied.size() - 1; i >= 0; i--) {
                if (applied.get(i).path().equals(path)) {
                    return incarnations.get(i);
                }
            }
            return 0;
        }
    }

    /**
     * A node's last values, as the server's sequencer would keep them: fed by the sink, written to
     * and read from the snapshot after the state machine's part. It records the order of its calls
     * and how many bytes the stream held when it was asked to write.
     */
    static final class LastValues implements UpdateSink, SnapshotContent {
        static final int MARKER = 0x4C415354; // "LAST"
        final Map<String, byte[]> values = new LinkedHashMap<>();
        final List<String> calls = new ArrayList<>();
        Thread thread;

        @Override
        public void apply(String path, long topicSequence, int incarnation, byte[] value) {
            values.put(path, value);
            calls.add("apply " + path + " " + topicSequence + " #" + incarnation);
            thread = Thread.currentThread();
        }

        @Override
        public void removed(String path, long lastSequence, int incarnation) {
            values.remove(path);
            calls.add("removed " + path + " " + lastSequence);
            thread = Thread.currentThread();
        }

        @Override
        public void write(DataOutput out) throws IOException {
            calls.add("write");
            thread = Thread.currentThread();
            out.writeInt(MARKER);
            out.writeInt(values.size());
            for (Map.Entry<String, byte[]> e : values.entrySet()) {
                out.writeUTF(e.getKey());
                out.writeInt(e.getValue().length);
                out.write(e.getValue());
            }
        }

        @Override
        public void read(DataInput in) throws IOException {
            calls.add("read");
            thread = Thread.currentThread();
            if (in.readInt() != MARKER) {
                throw new IOException("the node's part is not where it was written");
            }
            Map<String, byte[]> read = new LinkedHashMap<>(); // all or nothing, as a node's part should
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                String path = in.readUTF();
                byte[] value = new byte[in.readInt()];
                in.readFully(value);
                read.put(path, value);
            }
            values.clear();
            values.putAll(read);
        }

        Map<String, String> asStrings() {
            Map<String, String> m = new LinkedHashMap<>();
            values.forEach((k, v) -> m.put(k, new String(v, StandardCharsets.UTF_8)));
            return m;
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static LoggedPublish publish(String principal, long publisherId, int correlationId, String path, String value) {
        return new LoggedPublish(principal, publisherId, correlationId, false, path, utf8(value));
    }

    static LoggedPublish republish(String principal, long publisherId, int correlationId, String path, String value) {
        return new LoggedPublish(principal, publisherId, correlationId, true, path, utf8(value));
    }

    static LoggedPublish anonymous(String path, String value) {
        return new LoggedPublish(null, 0, 0, false, path, utf8(value));
    }

    /** An anonymous publish taken by a node past its heap mark: applied only if {@code path} exists. */
    static LoggedPublish toExistingTopicOnly(String path, String value) {
        return new LoggedPublish(null, 0, 0, 0, 0, false, path, utf8(value), true);
    }

    /** The removal of {@code path} whatever its last sequence. */
    static LoggedRemoval removal(String path) {
        return new LoggedRemoval(path, 0);
    }

    /** The removal of {@code path} only at {@code ifLastSequence} (an expiry). */
    static LoggedRemoval removal(String path, long ifLastSequence) {
        return new LoggedRemoval(path, ifLastSequence);
    }

    /** Applies one entry of {@code records}, as committed, and decodes its response. */
    static EntryResponse apply(TopicLog log, LoggedRecord... records) {
        return apply(log, List.of(records));
    }

    static EntryResponse apply(TopicLog log, List<? extends LoggedRecord> records) {
        byte[] entry = TopicLogCodec.encodeEntry(records);
        try {
            return TopicLogCodec.decodeResponse(log.apply(entry, 0, entry.length, true));
        } catch (MalformedEntryException e) {
            throw new AssertionError("the state machine's own response does not decode", e);
        }
    }

    /** The one result of an entry of one publish or removal. */
    static PublishResult applyOne(TopicLog log, LoggedRecord record) {
        EntryResponse response = apply(log, record);
        if (response.isRefused() || response.results().size() != 1) {
            throw new AssertionError("one result expected, got " + response);
        }
        return response.results().get(0);
    }

    /** The state machine's snapshot, content and all. */
    static byte[] snapshot(TopicLog log) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try {
            log.writeContentTo(new DataOutputStream(bytes));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return bytes.toByteArray();
    }

    static void restore(TopicLog log, byte[] snapshot) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(snapshot));
        log.readContentFrom(in);
        if (in.available() != 0) {
            throw new AssertionError(in.available() + " bytes of the snapshot left unread");
        }
    }

    static String hex(byte[] b) {
        return Arrays.toString(b);
    }
}
