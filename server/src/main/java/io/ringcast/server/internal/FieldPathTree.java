package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The distinct paths of one {@code fields} or {@code filter} option as a tree of keys, so that one
 * pass over a value finds them all: the root stands for the value's top-level object, each node for
 * a key under its parent's. A node where path {@code i} ends has {@link Node#leaf} {@code i}; a node
 * may be a leaf and have children (a filter on {@code quote} and on {@code quote.bid}).
 *
 * <p>Built once at parse time. {@link Node#visit} is written while a value is read, so a tree
 * belongs to one evaluator: one thread (the sequencer).
 */
final class FieldPathTree {
    static final class Node {
        /** The key, or null at the root. */
        final String key;
        /** {@code "key":} in UTF-8, as a projection writes it (a key needs no escapes: {@link FieldPath}). */
        final byte[] keyJson;
        /** Which path ends here (its index in the list the tree was built from), or -1. */
        int leaf = -1;
        /** The keys below, or null when none. */
        Map<String, Node> children;
        /**
         * The number of the evaluation that last met this key, so that a key met again in the same
         * object (JSON does not forbid it) is skipped: the first occurrence wins.
         */
        long visit;

        private Node(String key) {
            this.key = key;
            this.keyJson = key == null ? null : ('"' + key + "\":").getBytes(StandardCharsets.UTF_8);
        }

        /** The node under key {@code name}, or null. */
        Node child(String name) {
            return children == null ? null : children.get(name);
        }
    }

    final Node root = new Node(null);

    /**
     * Moves the parser (inside the object whose key is {@code node}) to the value of its next field
     * that is on the tree and met for the first time in evaluation {@code visit}, skipping the others
     * whole: the one place of the rule that a key repeated in an object counts once, at its first
     * occurrence. The field's first token is then the parser's current token.
     *
     * @return that field's node, or null at the object's end
     */
    static Node nextNamed(JsonParser parser, Node node, long visit) throws IOException {
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            Node child = node.child(parser.currentName());
            parser.nextToken();
            if (child == null || child.visit == visit) {
                parser.skipChildren();
                continue;
            }
            child.visit = visit;
            return child;
        }
        return null;
    }

    /** @param paths distinct paths; each one's node gets its index as {@link Node#leaf} */
    FieldPathTree(List<FieldPath> paths) {
        for (int i = 0; i < paths.size(); i++) {
            FieldPath path = paths.get(i);
            Node node = root;
            for (int s = 0; s < path.depth(); s++) {
                if (node.children == null) {
                    node.children = new HashMap<>();
                }
                node = node.children.computeIfAbsent(path.segment(s), Node::new);
            }
            assert node.leaf < 0 : "duplicate path " + path;
            node.leaf = i;
        }
    }
}
