package io.ringcast.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.ratis.server.RaftServer;
import org.jgroups.JChannel;
import org.jgroups.protocols.raft.RAFT;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The consensus engines' versions, pinned (issue 28, item 4). The workarounds written up in
 * docs/upstream/jgroups-raft.md ({@code ResendingRaft}, its {@code LogMatchingFollower},
 * {@code BarrierLog}) and our {@code Log}, {@code SegmentedLog} (held to the engine's own log
 * contract, {@code LogContractTest}), lean on members of jgroups-raft 1.1.4 on JGroups 5.5.7,
 * and the Ratis engine was built and measured on Ratis 3.3.0 (docs/upstream/ratis.md). A dependency
 * update fails here first: before changing a pin, run the tests that pin each workaround's upstream
 * bug against the new version ({@code LogMatchingFollowerTest}, {@code LogContractTest},
 * {@code RaftCatchUpTest}) and check its upstream report, so that a fix upstream retires the
 * workaround and a change upstream does not silently break it. (Ratis has no such canary yet.)
 */
class EngineVersionPinTest {

    @Test
    void jgroupsRaftIsTheVersionItsWorkaroundsWereWrittenFor() throws IOException {
        assertThat(versionOf(RAFT.class, "org.jgroups", "jgroups-raft")).isEqualTo("1.1.4.Final");
    }

    @Test
    void jgroupsIsTheVersionTheStackWasBuiltOn() throws IOException {
        assertThat(versionOf(JChannel.class, "org.jgroups", "jgroups")).isEqualTo("5.5.7.Final");
    }

    @Test
    void ratisIsTheVersionItsEngineWasMeasuredOn() throws IOException {
        assertThat(versionOf(RaftServer.class, "org.apache.ratis", "ratis-server")).isEqualTo("3.3.0");
    }

    /** The version in the Maven metadata of the jar that holds {@code inJar}. */
    private static String versionOf(Class<?> inJar, String groupId, String artifactId) throws IOException {
        String resource = "/META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (InputStream in = inJar.getResourceAsStream(resource)) {
            assertThat(in).as("%s on the test classpath", resource).isNotNull();
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        }
    }
}
