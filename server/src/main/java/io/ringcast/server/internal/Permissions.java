package io.ringcast.server.internal;

import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.ProtocolException;
import io.ringcast.protocol.Selector;
import io.ringcast.server.config.ServerConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * What one session may receive and publish: the union of its roles' selectors. Immutable; set
 * when the session is welcomed (I/O thread) and read by the sequencer, which sees it through the
 * inbound ring after the session's first command.
 */
final class Permissions {
    private final List<Selector> subscribe;
    private final List<Selector> publish;
    private final String who;

    /** Everything: for sessions that never pass a login (the JMH harness). */
    static final Permissions ALL = new Permissions(List.of(parse("#", PathLimits.DEFAULT)),
            List.of(parse("#", PathLimits.DEFAULT)), "everyone");

    private Permissions(List<Selector> subscribe, List<Selector> publish, String who) {
        this.subscribe = subscribe;
        this.publish = publish;
        this.who = who;
    }

    /** The union of {@code roleNames}' grants, for {@code who} (named in refusals). */
    static Permissions of(ServerConfig.Security security, List<String> roleNames, String who, PathLimits limits) {
        List<Selector> subscribe = new ArrayList<>();
        List<Selector> publish = new ArrayList<>();
        for (String name : roleNames) {
            ServerConfig.Security.Role role = security.role(name);
            if (role == null) {
                throw new IllegalArgumentException("unknown role '" + name + "'");
            }
            role.subscribe().forEach(s -> subscribe.add(parse(s, limits)));
            role.publish().forEach(s -> publish.add(parse(s, limits)));
        }
        return new Permissions(List.copyOf(subscribe), List.copyOf(publish), who);
    }

    /** A selector the config check already accepted. */
    private static Selector parse(String selector, PathLimits limits) {
        try {
            return Selector.parse(selector, limits);
        } catch (ProtocolException e) {
            throw new IllegalStateException("a role's selector passed the config check but does not parse: "
                    + e.reason(), e);
        }
    }

    String who() {
        return who;
    }

    /** Whether the session may receive the topic with these segments. */
    boolean mayRead(String[] segments) {
        return anyMatches(subscribe, segments);
    }

    boolean mayPublish(String[] segments) {
        return anyMatches(publish, segments);
    }

    /** Whether a subscription to {@code selector} could ever deliver something this session may read. */
    boolean mayEverRead(Selector selector) {
        for (Selector granted : subscribe) {
            if (overlap(granted, 0, selector, 0)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code selector} could match a topic this session may publish to (and so remove). */
    boolean mayEverPublish(Selector selector) {
        for (Selector granted : publish) {
            if (overlap(granted, 0, selector, 0)) {
                return true;
            }
        }
        return false;
    }

    private static boolean anyMatches(List<Selector> selectors, String[] segments) {
        // by index: a reply of '#' asks once per topic and session, and the iterator was not always optimised away
        for (int i = 0; i < selectors.size(); i++) {
            if (selectors.get(i).matches(segments)) {
                return true;
            }
        }
        return false;
    }

    /** Whether some path matches both selectors ({@code #} also matches its parent, as in MQTT). */
    private static boolean overlap(Selector a, int i, Selector b, int j) {
        boolean aDone = i == a.depth();
        boolean bDone = j == b.depth();
        if (aDone && bDone) {
            return true;
        }
        if ((!aDone && a.segment(i) == Selector.SUBTREE) || (!bDone && b.segment(j) == Selector.SUBTREE)) {
            return true;
        }
        if (aDone || bDone) {
            return false;
        }
        boolean segmentsMeet = a.segment(i) == Selector.ONE_SEGMENT || b.segment(j) == Selector.ONE_SEGMENT
                || a.segment(i).equals(b.segment(j));
        return segmentsMeet && overlap(a, i + 1, b, j + 1);
    }
}
