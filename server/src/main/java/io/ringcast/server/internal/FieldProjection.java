package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code fields} option: the projection of a JSON value to the fields its paths name
 * (docs/subscription-options.md, "fields"). Parsed once at subscribe; {@link #project} writes the
 * projection of one value, once per update for every subscriber with the same paths.
 *
 * <p>What a projection is, given a value that is a JSON object:
 * <ul>
 *   <li>an object holding the named fields that are present, in the order of the value (not of the
 *       paths), nested as the paths are: {@code quote.bid} gives {@code {"quote":{"bid":1.25}}};
 *       an object on the way is written only when something under it is, so a value without any
 *       named field projects to {@code {}};</li>
 *   <li>a named field's value copied byte for byte: a number keeps its text ({@code 1.250},
 *       {@code 1e3}), a string its escapes, an object or array (copied whole) its inner spacing.
 *       The structure around them is written without spaces, and keys as the paths spell them;</li>
 *   <li>a key repeated in one object: the first occurrence counts, later ones are skipped.</li>
 * </ul>
 * A value that is not a JSON object, that is not UTF-8 JSON, or that turns out malformed before the
 * projection is complete projects to {@code {}}; bytes after the last named field are not read, so
 * a defect there goes unseen. Equal values therefore always give equal bytes, which the server's
 * "did a named field change" comparison relies on.
 *
 * <p>Rules of the paths: at most {@link #MAX_PATHS}, at least one, no path twice, and no path inside
 * another ({@code quote} already copies {@code quote.bid} whole): refused rather than merged, so that
 * one projection has one spelling.
 *
 * <p>Evaluation: one Jackson streaming parser per call, over the value's bytes in place; it stops
 * once every path is copied. Per call it allocates the parser and its context objects, about 650
 * bytes (measured with {@code ThreadMXBean.getThreadAllocatedBytes}; 50 more per object level it
 * enters; Jackson's byte and char buffers are recycled), and asks for two
 * {@link com.fasterxml.jackson.core.JsonLocation}s per copied field (small, and often not
 * allocated at all once the JIT has inlined them): acceptable at one call per update per distinct
 * projection, never per subscriber. A large value of a topic with several views is read once
 * for all of them ({@link ValueIndex}), and each projection then copies its fields' bytes
 * ({@link #project(ValueIndex, ByteBuf)}).
 *
 * <p>Threads: {@link #parse} anywhere; {@link #project} from one thread only (the sequencer),
 * asserted: it reuses its parser input and scratch.
 */
final class FieldProjection {
    static final int MAX_PATHS = 32;

    private static final byte[] EMPTY_OBJECT = {'{', '}'};

    private final List<FieldPath> paths;
    private final FieldPathTree tree;
    private final JsonValueInput input = new JsonValueInput();

    // scratch of one project() call, per object depth from the root (0) down
    /** The node of the object being read at each depth. */
    private final FieldPathTree.Node[] levelNode = new FieldPathTree.Node[FieldPath.MAX_DEPTH + 1];
    /** Whether that object's key and opening brace have been written (at the root: always). */
    private final boolean[] levelOpened = new boolean[FieldPath.MAX_DEPTH + 1];
    /** How many fields have been written into it, for the commas. */
    private final int[] levelFields = new int[FieldPath.MAX_DEPTH + 1];
    private long visits;
    private int pathsLeft;
    // scratch of one project(ValueIndex) call: the fields present, sorted by where they start
    private final int[] foundIds = new int[MAX_PATHS];
    private final FieldPath[] foundPaths = new FieldPath[MAX_PATHS];

    private FieldProjection(List<FieldPath> paths) {
        this.paths = paths;
        this.tree = new FieldPathTree(paths);
    }

    /**
     * The projection to {@code paths} (each as {@link FieldPath} reads it).
     *
     * @throws InvalidOptionsException ({@code fields}) naming the first rule broken
     */
    static FieldProjection parse(List<String> paths) {
        if (paths == null || paths.isEmpty()) {
            throw new InvalidOptionsException(InvalidOptionsException.FIELDS, "no paths given; name at least one");
        }
        if (paths.size() > MAX_PATHS) {
            throw new InvalidOptionsException(InvalidOptionsException.FIELDS,
                    paths.size() + " paths, more than " + MAX_PATHS);
        }
        List<FieldPath> parsed = new ArrayList<>(paths.size());
        Set<FieldPath> seen = new HashSet<>();
        for (String text : paths) {
            FieldPath path = FieldPath.parse(text);
            if (!seen.add(path)) {
                throw new InvalidOptionsException(InvalidOptionsException.FIELDS,
                        "path " + InvalidOptionsException.quote(path.text()) + " is named twice");
            }
            parsed.add(path);
        }
        for (FieldPath inner : parsed) {
            for (FieldPath outer : parsed) {
                if (inner.isInside(outer)) {
                    throw new InvalidOptionsException(InvalidOptionsException.FIELDS, "path "
                            + InvalidOptionsException.quote(inner.text()) + " is inside path "
                            + InvalidOptionsException.quote(outer.text()) + ", which is copied whole; name one of them");
                }
            }
        }
        return new FieldProjection(Collections.unmodifiableList(parsed));
    }

    /**
     * The most bytes {@link #project} writes for a value of {@code valueLength} bytes: the value's
     * own length, plus the closing braces of a value cut short after its last named field (the
     * projection closes the root and every object on a path's way, at most {@link FieldPath#MAX_DEPTH}).
     * A complete object's projection is never longer than the object.
     */
    static int maxBytes(int valueLength) {
        return valueLength + FieldPath.MAX_DEPTH;
    }

    /** The paths, in the order given. */
    List<FieldPath> paths() {
        return paths;
    }

    /**
     * Writes the projection of the value in {@code length} bytes of {@code value} from {@code index}
     * (absolute; {@code value}'s indices do not move) at {@code out}'s writer index. Never throws
     * for any bytes of the value.
     *
     * @return how many bytes it wrote: at least 2 ({@code {}}), at most {@link #maxBytes}
     */
    int project(ByteBuf value, int index, int length, ByteBuf out) {
        int start = out.writerIndex();
        try (JsonParser parser = input.open(value, index, length)) {
            if (parser == null || parser.nextToken() != JsonToken.START_OBJECT) {
                return writeEmpty(out, start);
            }
            long visit = ++visits;
            pathsLeft = paths.size();
            levelNode[0] = tree.root;
            levelOpened[0] = true;
            levelFields[0] = 0;
            out.writeByte('{');
            copyFields(parser, 0, visit, value, index, length, out);
            out.writeByte('}');
            return out.writerIndex() - start;
        } catch (IOException e) {
            // not JSON, or malformed before the projection was complete (Jackson's exceptions are IOExceptions)
            return writeEmpty(out, start);
        }
    }

    /**
     * {@link #project(ByteBuf, int, int, ByteBuf)} of the value {@code index} read last, which
     * indexed this projection's paths: the same bytes, reading only those of its fields. The named
     * fields present, in the value's order, each under the objects on its way, opened once for the
     * run of fields under them, as the value nests them.
     */
    int project(ValueIndex index, ByteBuf out) {
        int start = out.writerIndex();
        if (!index.object()) {
            return writeEmpty(out, start);
        }
        int found = 0;
        for (int p = 0; p < paths.size(); p++) {
            int id = index.id(paths.get(p));
            if (index.has(id)) {
                if (index.end(id) < 0) {
                    return writeEmpty(out, start); // the fault is in this field's value
                }
                foundIds[found] = id;
                foundPaths[found++] = paths.get(p);
            } else if (!index.complete()) {
                return writeEmpty(out, start); // a fault came first: malformed before the projection was complete
            }
        }
        sortByStart(index, found);
        out.writeByte('{');
        levelFields[0] = 0;
        int open = 0; // objects on the way opened below the root
        FieldPathTree.Node[] way = levelNode;
        for (int f = 0; f < found; f++) {
            FieldPath path = foundPaths[f];
            int depth = path.depth();
            int shared = 0;
            while (shared < open && shared < depth - 1 && way[shared + 1].key.equals(path.segment(shared))) {
                shared++;
            }
            for (; open > shared; open--) {
                out.writeByte('}');
            }
            FieldPathTree.Node node = shared == 0 ? tree.root : way[shared];
            for (int d = shared; d < depth - 1; d++) {
                node = node.child(path.segment(d));
                if (levelFields[d]++ > 0) {
                    out.writeByte(',');
                }
                out.writeBytes(node.keyJson);
                out.writeByte('{');
                way[d + 1] = node;
                levelFields[d + 1] = 0;
                open = d + 1;
            }
            FieldPathTree.Node leaf = node.child(path.segment(depth - 1));
            if (levelFields[depth - 1]++ > 0) {
                out.writeByte(',');
            }
            out.writeBytes(leaf.keyJson);
            int id = foundIds[f];
            out.writeBytes(index.value(), index.valueIndex() + index.start(id), index.end(id) - index.start(id));
        }
        for (; open > 0; open--) {
            out.writeByte('}');
        }
        out.writeByte('}');
        return out.writerIndex() - start;
    }

    /** Sorts {@code foundIds[0..n)} and {@code foundPaths} alike by where each field starts: at most {@link #MAX_PATHS}. */
    private void sortByStart(ValueIndex index, int n) {
        for (int i = 1; i < n; i++) {
            int id = foundIds[i];
            FieldPath path = foundPaths[i];
            int j = i - 1;
            while (j >= 0 && index.start(foundIds[j]) > index.start(id)) {
                foundIds[j + 1] = foundIds[j];
                foundPaths[j + 1] = foundPaths[j];
                j--;
            }
            foundIds[j + 1] = id;
            foundPaths[j + 1] = path;
        }
    }

    private static int writeEmpty(ByteBuf out, int start) {
        out.writerIndex(start);
        out.writeBytes(EMPTY_OBJECT);
        return EMPTY_OBJECT.length;
    }

    /**
     * Reads the fields of the object at {@code depth} (the parser just past its START_OBJECT), copying
     * the named ones and descending into objects on a path's way; the parser ends at its END_OBJECT,
     * or anywhere once every path is copied.
     *
     * @return true once every path is copied: read no further
     */
    private boolean copyFields(JsonParser parser, int depth, long visit, ByteBuf value, int index, int length,
                               ByteBuf out) throws IOException {
        FieldPathTree.Node node = levelNode[depth];
        for (FieldPathTree.Node child; (child = FieldPathTree.nextNamed(parser, node, visit)) != null; ) {
            JsonToken token = parser.currentToken();
            if (child.leaf >= 0) {
                openLevels(depth, out);
                if (levelFields[depth]++ > 0) {
                    out.writeByte(',');
                }
                out.writeBytes(child.keyJson);
                copyToken(parser, token, value, index, length, out);
                if (--pathsLeft == 0) {
                    return true;
                }
            } else if (token == JsonToken.START_OBJECT) {
                int below = depth + 1;
                levelNode[below] = child;
                levelOpened[below] = false;
                levelFields[below] = 0;
                boolean done = copyFields(parser, below, visit, value, index, length, out);
                if (levelOpened[below]) {
                    out.writeByte('}');
                }
                if (done) {
                    return true;
                }
            } else {
                parser.skipChildren(); // an array or a scalar where the path wants an object: missing
            }
        }
        return false;
    }

    /** Writes the key and opening brace of each object from the root's child down to {@code depth} not written yet. */
    private void openLevels(int depth, ByteBuf out) {
        for (int d = 1; d <= depth; d++) {
            if (!levelOpened[d]) {
                if (levelFields[d - 1]++ > 0) {
                    out.writeByte(',');
                }
                out.writeBytes(levelNode[d].keyJson);
                out.writeByte('{');
                levelOpened[d] = true;
            }
        }
    }

    /** Copies the bytes of the current value (a scalar token, or a whole object or array) from {@code value} to {@code out}. */
    private static void copyToken(JsonParser parser, JsonToken token, ByteBuf value, int index, int length,
                                  ByteBuf out) throws IOException {
        long from = parser.currentTokenLocation().getByteOffset();
        long to;
        if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
            parser.skipChildren();
            to = parser.currentTokenLocation().getByteOffset() + 1; // past the closing bracket
        } else {
            if (token == JsonToken.VALUE_STRING) {
                parser.finishToken(); // strings are read lazily: read to the closing quote
            }
            to = parser.currentLocation().getByteOffset();
        }
        if (from < 0 || to > length || to <= from) {
            throw new JsonParseException(parser, "token offsets " + from + ".." + to + " outside the value");
        }
        out.writeBytes(value, index + (int) from, (int) (to - from));
    }

    @Override
    public String toString() {
        return "fields " + paths;
    }
}
