package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where the fields that a topic's views read lie in one value: the single pass over the value that
 * all its filters and projections share ({@link ValueFilter#matches(ValueIndex)},
 * {@link FieldProjection#project(ValueIndex, ByteBuf)}). Each view on its own reads the value from
 * its start until it has met its paths, so a thousand views of a topic read a value of 1 MB a
 * thousand times, and one publish held the sequencer for a third of a second. With the index, the
 * value is read once, to its end, descending only into the objects on some view's path; each view
 * then reads only its own fields' bytes.
 *
 * <p>What it records, for each distinct path of the views ({@link #of}): whether the value has it
 * (the first occurrence of a key in an object, as the evaluators count it), its first token, and
 * the byte range of its value; and for the whole value, whether it is a JSON object at all and
 * whether it was read to its end without a fault. The evaluators give the same answers with the
 * index as without it, for any bytes: a view whose paths all lie before a fault sees them, a view
 * with a path not met before a fault sees a malformed value, as each would reading on its own
 * (checked for random values in {@code ValueIndexTest}).
 *
 * <p>Sequencer thread only, as the evaluators: its scratch is reused for every value.
 */
final class ValueIndex {
    /** Below this many bytes each view reads the value on its own: it meets its fields after a few. */
    static final int MIN_VALUE_BYTES = 16 * 1024;

    private final FieldPathTree tree;
    private final Map<String, Integer> idOf;
    private final JsonValueInput input = new JsonValueInput();
    // per path id, for the value read last
    private final long[] foundIn;
    private final long[] start;
    private final long[] end;
    private final JsonToken[] token;
    private long reads;
    private boolean object;
    private boolean complete;
    private ByteBuf value;
    private int index;
    private int length;

    private ValueIndex(List<FieldPath> paths) {
        this.tree = new FieldPathTree(paths);
        this.idOf = new HashMap<>();
        for (int i = 0; i < paths.size(); i++) {
            idOf.put(paths.get(i).text(), i);
        }
        this.foundIn = new long[paths.size()];
        this.start = new long[paths.size()];
        this.end = new long[paths.size()];
        this.token = new JsonToken[paths.size()];
    }

    /** An index of the paths the views of {@code topic} read; null when none of them reads the value. */
    static ValueIndex of(Topic topic) {
        Map<String, FieldPath> distinct = new HashMap<>();
        for (int i = 0; i < topic.viewCount(); i++) {
            View view = topic.view(i).view;
            if (view.filter != null) {
                view.filter.paths().forEach(p -> distinct.putIfAbsent(p.text(), p));
            }
            if (view.projection != null) {
                view.projection.paths().forEach(p -> distinct.putIfAbsent(p.text(), p));
            }
        }
        return distinct.isEmpty() ? null : of(new ArrayList<>(distinct.values()));
    }

    /** An index of {@code paths}, distinct. */
    static ValueIndex of(List<FieldPath> paths) {
        return new ValueIndex(paths);
    }

    /** Reads the {@code length} bytes of {@code value} from {@code index} (absolute; indices do not move). */
    void read(ByteBuf value, int index, int length) {
        this.value = value;
        this.index = index;
        this.length = length;
        long read = ++reads;
        object = false;
        complete = false;
        try (JsonParser parser = input.open(value, index, length)) {
            if (parser == null || parser.nextToken() != JsonToken.START_OBJECT) {
                return;
            }
            object = true;
            readFields(parser, tree.root, read);
            complete = true;
        } catch (IOException e) {
            // malformed at some point: what lies before it was recorded
        }
    }

    /**
     * Records the paths ending at, and reads the objects on the way below, the fields of the
     * object whose key is {@code node} (the parser just past its START_OBJECT); ends at its END_OBJECT.
     */
    private void readFields(JsonParser parser, FieldPathTree.Node node, long read) throws IOException {
        for (FieldPathTree.Node child; (child = FieldPathTree.nextNamed(parser, node, read)) != null; ) {
            JsonToken first = parser.currentToken();
            int id = child.leaf;
            if (id >= 0) {
                foundIn[id] = read;
                token[id] = first;
                start[id] = parser.currentTokenLocation().getByteOffset();
                end[id] = -1; // not known until its value is read through
            }
            if (child.children != null && first == JsonToken.START_OBJECT) {
                readFields(parser, child, read);
            } else if (first == JsonToken.START_OBJECT || first == JsonToken.START_ARRAY) {
                parser.skipChildren();
            } else if (first == JsonToken.VALUE_STRING) {
                parser.finishToken(); // strings are read lazily: read to the closing quote
            }
            if (id >= 0) {
                end[id] = first == JsonToken.START_OBJECT || first == JsonToken.START_ARRAY
                        ? parser.currentTokenLocation().getByteOffset() + 1 // past the closing bracket
                        : parser.currentLocation().getByteOffset();
            }
        }
    }

    /** Whether the value read last is a JSON object (in UTF-8). */
    boolean object() {
        return object;
    }

    /** Whether it was read to its end without a fault: a path not found is then missing, not unread. */
    boolean complete() {
        return complete;
    }

    /** The id of {@code path}, one the views of the topic read. */
    int id(FieldPath path) {
        Integer id = idOf.get(path.text());
        assert id != null : "path " + path + " is not indexed";
        return id;
    }

    /** Whether the value read last has path {@code id}. */
    boolean has(int id) {
        return foundIn[id] == reads;
    }

    /** The first token of path {@code id}'s value; only when {@link #has}. */
    JsonToken token(int id) {
        return token[id];
    }

    /** Where its value starts, counted from the value's first byte; only when {@link #has}. */
    int start(int id) {
        return (int) start[id];
    }

    /** Where its value ends (exclusive), or -1 when a fault within it stopped the reading; only when {@link #has}. */
    int end(int id) {
        return (int) end[id];
    }

    /** The buffer of the value read last, and where in it the value starts: for the evaluators to read a field's bytes. */
    ByteBuf value() {
        return value;
    }

    int valueIndex() {
        return index;
    }

    int valueLength() {
        return length;
    }
}
