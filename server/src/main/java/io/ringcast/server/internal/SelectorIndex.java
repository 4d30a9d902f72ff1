package io.ringcast.server.internal;

import io.ringcast.protocol.Selector;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Every open subscription, as a trie of selector segments, to find the sessions a newly created
 * topic must go to without testing every subscription. Sequencer thread only.
 */
final class SelectorIndex {
    private final Node root = new Node();

    /** One subscription of one session. */
    record Entry(Session session, int subscriptionId) {
    }

    /** Receives the matches of {@link #forEachMatch}. */
    interface MatchVisitor {
        void visit(Session session, int subscriptionId);
    }

    private static final class Node {
        final Map<String, Node> children = new HashMap<>(4);
        Node anyOne;
        // sets, not lists: ten thousand sessions on '#' closing at once (a network blip) each removed
        // theirs from a list of all of them, and held the sequencer for seconds
        /** Subscriptions whose selector ends here, in the order they came. */
        final Set<Entry> exact = new LinkedHashSet<>();
        /** Subscriptions whose selector is this node's path followed by '#', in the order they came. */
        final Set<Entry> subtree = new LinkedHashSet<>();
    }

    void add(Selector selector, Session session, int subscriptionId) {
        Node node = root;
        for (int i = 0; i < selector.depth(); i++) {
            String segment = selector.segment(i);
            if (segment == Selector.SUBTREE) {
                node.subtree.add(new Entry(session, subscriptionId));
                return;
            }
            node = segment == Selector.ONE_SEGMENT
                    ? (node.anyOne != null ? node.anyOne : (node.anyOne = new Node()))
                    : node.children.computeIfAbsent(segment, s -> new Node());
        }
        node.exact.add(new Entry(session, subscriptionId));
    }

    void remove(Selector selector, Session session, int subscriptionId) {
        Node node = root;
        for (int i = 0; i < selector.depth() && node != null; i++) {
            String segment = selector.segment(i);
            if (segment == Selector.SUBTREE) {
                node.subtree.remove(new Entry(session, subscriptionId));
                return;
            }
            node = segment == Selector.ONE_SEGMENT ? node.anyOne : node.children.get(segment);
        }
        if (node != null) {
            node.exact.remove(new Entry(session, subscriptionId));
        }
        // empty nodes are kept: subscriptions come and go on the same shapes, and the trie stays small
    }

    /** Calls {@code visitor} for every subscription whose selector matches the path. */
    void forEachMatch(String[] segments, MatchVisitor visitor) {
        match(root, segments, 0, visitor);
    }

    private static void match(Node node, String[] segments, int depth, MatchVisitor visitor) {
        if (depth > 0) {
            for (Entry e : node.subtree) {
                visitor.visit(e.session(), e.subscriptionId());
            }
        }
        if (depth == segments.length) {
            for (Entry e : node.exact) {
                visitor.visit(e.session(), e.subscriptionId());
            }
            return;
        }
        if (depth == 0) {
            for (Entry e : node.subtree) { // '#' alone matches every topic
                visitor.visit(e.session(), e.subscriptionId());
            }
        }
        Node child = node.children.get(segments[depth]);
        if (child != null) {
            match(child, segments, depth + 1, visitor);
        }
        if (node.anyOne != null) {
            match(node.anyOne, segments, depth + 1, visitor);
        }
    }
}
