package io.ringcast.cluster.internal;

import io.ringcast.cluster.ClusterSettings;
import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.MergeView;
import org.jgroups.Receiver;
import org.jgroups.View;
import org.jgroups.protocols.FD_ALL3;
import org.jgroups.protocols.FD_SOCK2;
import org.jgroups.protocols.FRAG4;
import org.jgroups.protocols.MERGE3;
import org.jgroups.protocols.MFC;
import org.jgroups.protocols.TCP;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.VERIFY_SUSPECT2;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.protocols.pbcast.STABLE;
import org.jgroups.util.NameCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Who is in the cluster, from JGroups: a TCP stack with the static member list ({@code TCPPING}),
 * failure detection by heartbeats ({@code FD_ALL3}: suspected after 3 s without one, checked every
 * second) and by socket ({@code FD_SOCK2}: a killed process is suspected at once), a suspicion
 * verified for 1 s ({@code VERIFY_SUSPECT2}) before the node is removed, and {@code MERGE3} (every
 * 1 to 3 s) so that sides of a split, or a node that was frozen, merge back within seconds. JGroups
 * logs through SLF4J.
 *
 * <p>Thread contract: the view callback runs on a JGroups thread; hand it to your own thread.
 */
public final class Membership implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Membership.class);
    private static final String CLUSTER_NAME = "ringcast";
    /** FD_SOCK2 listens on the membership port plus this (or one of the next 10 ports). */
    public static final int FD_SOCK_PORT_OFFSET = 1000;

    /** Told of each view: its id (the same at every member) and the members' names, coordinator first. */
    @FunctionalInterface
    public interface ViewListener {
        /**
         * @param carriedOn for a view that merges sides of a split: the members of the side that
         *                  carried on (the newest side holding a majority), whose sequencing counts;
         *                  null for any other view, or when no side held a majority
         */
        void onView(long viewId, List<String> members, List<String> carriedOn);
    }

    private final ClusterSettings settings;
    private final ViewListener listener;
    private JChannel channel;
    private volatile List<String> view = List.of();

    public Membership(ClusterSettings settings, ViewListener listener) {
        this.settings = settings;
        this.listener = listener;
    }

    /** Builds the stack, takes the node's name as its logical name and joins. Returns once connected. */
    public void start() throws Exception {
        ClusterSettings.Member self = settings.self();
        InetAddress bind = InetAddress.getByName(self.host());
        List<InetSocketAddress> initialHosts = new ArrayList<>();
        for (ClusterSettings.Member m : settings.members()) {
            initialHosts.add(new InetSocketAddress(m.host(), m.membershipPort()));
        }
        TCP tcp = new TCP();
        tcp.setValue("bind_addr", bind);
        tcp.setValue("bind_port", self.membershipPort());
        tcp.setValue("port_range", 0);
        channel = new JChannel(
                tcp,
                new TCPPING().setInitialHosts(initialHosts).setPortRange(0),
                new MERGE3().setMinInterval(1000).setMaxInterval(3000),
                // its own port: membershipPort + 1000 (the default offset, 100, meets the shipped peer ports)
                new FD_SOCK2().setBindAddress(bind).setOffset(FD_SOCK_PORT_OFFSET).setPortRange(10),
                new FD_ALL3().setTimeout(3000).setInterval(1000),
                new VERIFY_SUSPECT2().setTimeout(1000),
                new NAKACK2(),
                new UNICAST3(),
                new STABLE(),
                new GMS().setJoinTimeout(1000).printLocalAddress(false),
                new MFC(),
                new FRAG4());
        channel.name(settings.nodeName());
        channel.setReceiver(new Receiver() {
            @Override
            public void viewAccepted(View v) {
                List<String> names = new ArrayList<>(v.size());
                for (Address a : v.getMembers()) {
                    names.add(nameOf(a));
                }
                view = List.copyOf(names);
                List<String> carriedOn = v instanceof MergeView merge ? sideThatCarriedOn(merge) : null;
                log.debug("JGroups view {}: {} (merge: side that carried on {})", v.getViewId(), names, carriedOn);
                listener.onView(v.getViewId().getId(), view, carriedOn);
            }
        });
        channel.connect(CLUSTER_NAME);
    }

    /** Of the merged sides, the newest that held a majority of the configured members; null if none did. */
    private List<String> sideThatCarriedOn(MergeView merge) {
        View best = null;
        for (View side : merge.getSubgroups()) {
            if (side.size() >= settings.majority()
                    && (best == null || side.getViewId().getId() > best.getViewId().getId())) {
                best = side;
            }
        }
        if (best == null) {
            return null;
        }
        List<String> names = new ArrayList<>();
        for (Address a : best.getMembers()) {
            names.add(nameOf(a));
        }
        return names;
    }

    private static String nameOf(Address a) {
        String name = NameCache.get(a);
        return name != null ? name : a.toString();
    }

    /** The current view's member names, coordinator first. Any thread. */
    public List<String> view() {
        return view;
    }

    /** Leaves the cluster (the others get a view without this node at once) and closes. Idempotent. */
    @Override
    public void close() {
        if (channel != null) {
            channel.close();
        }
    }
}
