package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigFixtures.assertRefused;
import static io.ringcast.server.config.ConfigFixtures.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.server.config.ServerConfig.Cluster;
import io.ringcast.server.config.ServerConfig.Cluster.Member;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code cluster} checks ({@link ClusterRules}): made only when the cluster is enabled; a member
 * list with names and ports unique that names this node. Ranges at both ends are in
 * {@link ConfigRangesTest}.
 */
class ClusterRulesTest {

    @Test
    void threeNodesOnOneMachineWithDistinctPortsAreAccepted() {
        Cluster c = load("node-2", member("node-1", "127.0.0.1", 7801), member("node-2", "127.0.0.1", 7802),
                member("node-3", "127.0.0.1", 7803));

        assertThat(c.members()).containsExactly(new Member("node-1", "127.0.0.1", 7801),
                new Member("node-2", "127.0.0.1", 7802), new Member("node-3", "127.0.0.1", 7803));
        assertThat(c.nodeName()).isEqualTo("node-2");
    }

    @Test
    void nodesOnDifferentHostsMayAllUseTheSamePorts() {
        Cluster c = load("a", member("a", "10.0.0.1", 7800), member("b", "10.0.0.2", 7800));

        assertThat(c.members()).hasSize(2);
    }

    @Test
    void aSingleNodeClusterIsAccepted() {
        assertThat(load("solo", member("solo", "localhost", 7800)).members()).hasSize(1);
    }

    @Test
    void anEnabledClusterWithoutMembersIsRefused() {
        assertRefused(cluster("a"), "cluster.members", "key 'cluster.members' must list every node of the cluster "
                + "(name, host, membershipPort), this one included");
    }

    @Test
    void aNodeNameNotAmongTheMembersIsRefusedListingThem() {
        ConfigException e = refusal(cluster("node-9", member("node-1", "h", 7801)));

        assertThat(e).hasMessage("key 'cluster.nodeName' must name one of cluster.members [node-1], got \"node-9\"");
        assertThat(e.key()).hasValue("cluster.nodeName");
    }

    @Test
    void anEmptyNodeNameIsRefusedWhenTheClusterIsEnabled() {
        assertThat(refusal(cluster("", member("a", "h", 7801))).key()).hasValue("cluster.nodeName");
    }

    @Test
    void aMemberNamedTwiceIsRefusedNamingTheSecond() {
        assertRefused(cluster("a", member("a", "h", 7801), member("b", "h", 7802), member("b", "h", 7803)),
                "cluster.members[2].name", "key 'cluster.members[2].name': node name 'b' is listed twice");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            name | '""'       | must be a node name, got ""
            name | '"  "'     | must be a node name, got "  "
            host | '""'       | must be a host name or IP address, got ""
            host | '"a host"' | must be a host name or IP address, got "a host"
            """)
    void aMemberWithoutANameOrHostIsRefusedNamingIt(String key, String value, String expected) {
        String name = key.equals("name") ? value : "b";
        String host = key.equals("host") ? value : "h";

        assertRefused(cluster("a", member("a", "h", 7801), member(name, host, 7802)),
                "cluster.members[1]." + key, "key 'cluster.members[1]." + key + "' " + expected);
    }

    @Test
    void aMembershipPortTakenByAnotherMemberOnTheSameHostIsRefused() {
        assertRefused(cluster("a", member("a", "h", 7801), member("b", "h", 7801)),
                "cluster.members[1]", "key 'cluster.members[1]': a port of h is used twice among the members");
    }

    @Test
    void aMembershipPortAmongAnotherMembersFailureDetectionPortsOnTheSameHostIsRefused() {
        assertRefused(cluster("a", member("a", "h", 7801), member("b", "h", 8805)), "cluster.members[1].membershipPort",
                "key 'cluster.members[1].membershipPort': port 8805 of h is among the failure detection ports of 'a' "
                        + "(8801 to 8810)");
        assertThat(load("a", member("a", "h", 7801), member("b", "other", 8805)).members()).hasSize(2);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 64526})
    void aMembershipPortOutside1To64525IsRefusedNamingIt(int port) {
        ConfigException e = refusal(cluster("a", "{name: a, host: h, membershipPort: " + port + "}"));

        assertThat(e.key()).hasValue("cluster.members[0].membershipPort");
        assertThat(e).hasMessageContaining("must be between 1 and 64525");
    }

    @Test
    void theEdgePorts1And64525AreAccepted() {
        assertThat(load("a", member("a", "h", 1)).members().get(0)).isEqualTo(new Member("a", "h", 1));
        assertThat(load("a", member("a", "h", 64525)).members().get(0)).isEqualTo(new Member("a", "h", 64525));
    }

    @Test
    void aDisabledClusterIsNotCheckedSoASingleNodeKeepsAnyDraftOfIt() {
        Cluster c = ConfigLoader.fromYaml("cluster:\n  enabled: false\n  nodeName: nobody\n  voteTimeoutMs: 0\n"
                + "  members: [" + member("a", "h", 1) + "]\n").cluster();

        assertThat(c.enabled()).isFalse();
    }

    // ---------------------------------------------------------------------------------------------

    private static Cluster load(String nodeName, String... members) {
        return ConfigLoader.fromYaml(cluster(nodeName, members)).cluster();
    }

    /** An enabled {@code cluster} section with this node name and these members (flow mappings). */
    static String cluster(String nodeName, String... members) {
        return "cluster:\n  enabled: true\n  nodeName: \"" + nodeName + "\"\n  members: [" + String.join(", ", members)
                + "]\n";
    }

    static String member(String name, String host, int membershipPort) {
        return "{name: " + name + ", host: " + host + ", membershipPort: " + membershipPort + "}";
    }
}
