package io.ringcast.server.internal;

import io.ringcast.protocol.Selector;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Every topic by path, and as a tree of segments for wildcard selectors. Sequencer thread only.
 */
final class TopicTree {
    private final Map<String, Topic> byPath = new HashMap<>();
    private final Node root = new Node();

    private static final class Node {
        final Map<String, Node> children = new HashMap<>(4);
        Topic topic;
    }

    Topic get(String path) {
        return byPath.get(path);
    }

    int size() {
        return byPath.size();
    }

    void add(Topic topic) {
        Node node = root;
        for (String segment : topic.segments) {
            node = node.children.computeIfAbsent(segment, s -> new Node());
        }
        node.topic = topic;
        byPath.put(topic.path, topic);
    }

    Iterable<Topic> all() {
        return byPath.values();
    }

    /** Calls {@code action} for every existing topic the selector matches. */
    void forEachMatch(Selector selector, Consumer<Topic> action) {
        if (selector.isExact()) {
            Topic t = byPath.get(selector.text());
            if (t != null) {
                action.accept(t);
            }
            return;
        }
        match(root, selector, 0, action);
    }

    private static void match(Node node, Selector selector, int depth, Consumer<Topic> action) {
        if (depth == selector.depth()) {
            if (node.topic != null) {
                action.accept(node.topic);
            }
            return;
        }
        String segment = selector.segment(depth);
        if (segment == Selector.SUBTREE) {
            // '#' matches the node it hangs from and everything below; the root is no topic
            subtree(node, action);
        } else if (segment == Selector.ONE_SEGMENT) {
            for (Node child : node.children.values()) {
                match(child, selector, depth + 1, action);
            }
        } else {
            Node child = node.children.get(segment);
            if (child != null) {
                match(child, selector, depth + 1, action);
            }
        }
    }

    private static void subtree(Node node, Consumer<Topic> action) {
        if (node.topic != null) {
            action.accept(node.topic);
        }
        for (Node child : node.children.values()) {
            subtree(child, action);
        }
    }
}
