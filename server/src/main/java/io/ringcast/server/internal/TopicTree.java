package io.ringcast.server.internal;

import io.ringcast.protocol.Selector;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Every topic by path, as a tree of segments for wildcard selectors, and in the order of its
 * creation. Sequencer thread only.
 */
final class TopicTree {
    private final Map<String, Topic> byPath = new HashMap<>();
    /**
     * Topics are never removed, so a topic's place here never changes: a streamed subscribe reply
     * walks this list with an index and an end fixed when it opened, instead of holding a list of
     * its topics ({@link Subscriptions}).
     */
    private final ArrayList<Topic> inCreationOrder = new ArrayList<>();
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
        inCreationOrder.add(topic);
    }

    /** The {@code index}-th topic created, {@code 0 <= index < size()}. */
    Topic inCreationOrder(int index) {
        return inCreationOrder.get(index);
    }

    Iterable<Topic> all() {
        return byPath.values();
    }

    /** Calls {@code action} for every existing topic the selector matches. */
    void forEachMatch(Selector selector, Consumer<Topic> action) {
        forEachMatchWhile(selector, topic -> {
            action.accept(topic);
            return true;
        });
    }

    /**
     * Calls {@code action} for the existing topics the selector matches until it returns false.
     *
     * @return false when {@code action} stopped the walk
     */
    boolean forEachMatchWhile(Selector selector, Predicate<Topic> action) {
        if (selector.isExact()) {
            Topic t = byPath.get(selector.text());
            return t == null || action.test(t);
        }
        return match(root, selector, 0, action);
    }

    private static boolean match(Node node, Selector selector, int depth, Predicate<Topic> action) {
        if (depth == selector.depth()) {
            return node.topic == null || action.test(node.topic);
        }
        String segment = selector.segment(depth);
        if (segment == Selector.SUBTREE) {
            // '#' matches the node it hangs from and everything below; the root is no topic
            return subtree(node, action);
        } else if (segment == Selector.ONE_SEGMENT) {
            for (Node child : node.children.values()) {
                if (!match(child, selector, depth + 1, action)) {
                    return false;
                }
            }
            return true;
        } else {
            Node child = node.children.get(segment);
            return child == null || match(child, selector, depth + 1, action);
        }
    }

    private static boolean subtree(Node node, Predicate<Topic> action) {
        if (node.topic != null && !action.test(node.topic)) {
            return false;
        }
        for (Node child : node.children.values()) {
            if (!subtree(child, action)) {
                return false;
            }
        }
        return true;
    }
}
