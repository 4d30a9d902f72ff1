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
     * A topic's place here never changes while a streamed subscribe reply may walk the list: such
     * a reply walks it with an index and an end fixed when it opened, instead of holding a list of
     * its topics ({@link Subscriptions}). A removed topic stays in its place, marked
     * {@link Topic#removed}, until {@link #compact} drops the removed ones when no reply walks.
     */
    private final ArrayList<Topic> inCreationOrder = new ArrayList<>();
    /** How many of {@link #inCreationOrder} are removed. */
    private int removedInOrder;
    private final Node root = new Node();

    private static final class Node {
        final Map<String, Node> children = new HashMap<>(4);
        Topic topic;
    }

    Topic get(String path) {
        return byPath.get(path);
    }

    /** The number of topics. */
    int size() {
        return byPath.size();
    }

    /** The length of the creation order, removed topics not yet compacted away included: a streamed reply's end. */
    int createdSize() {
        return inCreationOrder.size();
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

    /** The {@code index}-th topic created, {@code 0 <= index < createdSize()}; it may be {@link Topic#removed}. */
    Topic inCreationOrder(int index) {
        return inCreationOrder.get(index);
    }

    /**
     * Takes the topic out of the tree: it is no longer found by path or selector. It keeps its place
     * in the creation order, marked removed, until {@link #compact}.
     */
    void remove(Topic topic) {
        assert byPath.get(topic.path) == topic : topic.path + " is not in the tree";
        byPath.remove(topic.path);
        topic.removed = true;
        removedInOrder++;
        prune(root, topic.segments, 0);
    }

    /** Drops the topic's node and every node it leaves without topic or children; returns whether {@code node} is empty now. */
    private static boolean prune(Node node, String[] segments, int depth) {
        if (depth == segments.length) {
            node.topic = null;
        } else {
            Node child = node.children.get(segments[depth]);
            if (child != null && prune(child, segments, depth + 1)) {
                node.children.remove(segments[depth]);
            }
        }
        return node.topic == null && node.children.isEmpty();
    }

    /**
     * Drops the removed topics from the creation order once they are at least as many as the
     * topics left (and a few thousand), so that topics made and removed in a loop take no memory
     * there; only when no streamed reply walks the order ({@code walkers} 0), since it would move
     * their places.
     *
     * @return whether it compacted
     */
    boolean compact(int walkers) {
        if (walkers > 0 || removedInOrder < 4096 || removedInOrder < byPath.size()) {
            return false;
        }
        inCreationOrder.removeIf(t -> t.removed);
        inCreationOrder.trimToSize();
        removedInOrder = 0;
        return true;
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
        if (node.children.isEmpty()) {
            return true; // a leaf, as most topics are: '#' walks every one, and the iterator was not always optimised away
        }
        for (Node child : node.children.values()) {
            if (!subtree(child, action)) {
                return false;
            }
        }
        return true;
    }
}
