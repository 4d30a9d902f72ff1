package io.ringcast.cluster.internal;

import io.ringcast.testkit.Await;
import io.ringcast.testkit.FreePorts;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.cluster.ClusterSettings;
import org.jgroups.logging.LogFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Three real JGroups channels in one JVM on loopback. Failure detection of killed and frozen
 * processes (SIGKILL, SIGSTOP) needs separate processes: integration-tests covers it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MembershipTest {
    private static final Duration AWAIT = Duration.ofSeconds(15);

    private final List<Membership> memberships = new ArrayList<>();
    private final List<List<List<String>>> viewsSeen = new ArrayList<>();

    @AfterEach
    void closeAll() {
        memberships.forEach(Membership::close);
    }

    @Test
    void threeMembersFormOneViewNamedAndOrderedAlike() throws Exception {
        start(3);

        List<String> all = List.of("n1", "n2", "n3");
        await(() -> memberships.stream().allMatch(m -> m.view().size() == 3), this::views);
        for (int i = 0; i < 3; i++) {
            // n1 started first, so it is the coordinator; the others joined in order
            assertThat(memberships.get(i).view()).as("view at n" + (i + 1)).isEqualTo(all);
            int node = i;
            await(() -> lastSeen(node).equals(all), () -> "n" + (node + 1) + " was told " + viewsSeen.get(node));
        }
    }

    @Test
    void theOthersSeeAViewWithoutTheMemberThatLeft() throws Exception {
        start(3);
        await(() -> memberships.stream().allMatch(m -> m.view().size() == 3), this::views);

        // the coordinator leaves: the harder case, one of the others must take over the view
        memberships.get(0).close();

        List<String> rest = List.of("n2", "n3");
        await(() -> memberships.get(1).view().equals(rest) && memberships.get(2).view().equals(rest), this::views);
        await(() -> lastSeen(1).equals(rest) && lastSeen(2).equals(rest), () -> "told " + viewsSeen);
    }

    @Test
    void closingTwiceOrWithoutStartingIsHarmless() throws Exception {
        start(1);
        await(() -> memberships.get(0).view().equals(List.of("n1")), this::views);
        memberships.get(0).close();
        memberships.get(0).close();

        ClusterSettings settings = new ClusterSettings("n1",
                List.of(new ClusterSettings.Member("n1", "127.0.0.1", FreePorts.pick(), FreePorts.pick())), 16, 64, 1000);
        new Membership(settings, (viewId, members, carriedOn) -> { }).close();
    }

    @Test
    void jgroupsLogsThroughSlf4j() {
        // JGroups prefers log4j2-core when it is on the class path, then SLF4J, then JUL
        // (org.jgroups.logging.LogFactory); nothing here may bring log4j2-core in
        assertThat(LogFactory.loggerType()).isEqualTo("slf4j");
    }

    // ------------------------------------------------------------------ helpers

    private void start(int n) throws Exception {
        String loopback = InetAddress.getLoopbackAddress().getHostAddress();
        List<ClusterSettings.Member> members = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            members.add(new ClusterSettings.Member("n" + i, loopback, FreePorts.pick(), FreePorts.pick()));
        }
        for (int i = 1; i <= n; i++) {
            List<List<String>> seen = new CopyOnWriteArrayList<>();
            viewsSeen.add(seen);
            Membership membership = new Membership(new ClusterSettings("n" + i, members, 16, 64, 1000),
                    (viewId, names, carriedOn) -> seen.add(names));
            memberships.add(membership);
            membership.start();
        }
    }

    private List<String> lastSeen(int node) {
        List<List<String>> seen = viewsSeen.get(node);
        return seen.isEmpty() ? List.of() : seen.get(seen.size() - 1);
    }

    private String views() {
        return "views " + memberships.stream().map(Membership::view).toList();
    }

    private static void await(BooleanSupplier condition, Supplier<String> what) {
        Await.until(condition, AWAIT, Duration.ofMillis(20), what);
    }
}
