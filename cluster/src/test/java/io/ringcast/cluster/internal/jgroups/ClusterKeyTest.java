package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.ringcast.cluster.internal.ClusterKey;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.crypto.SecretKey;

/**
 * Members talk to each other encrypted with a key derived from {@code cluster.secretFile}
 * ({@link ClusterKey}, {@code SYM_ENCRYPT} in {@link RaftStack}): members with the same secret form
 * the group and commit; a member with another secret is heard by none of them, never joins their
 * view, and the members it asks to join log whom they refused.
 */
@Timeout(60)
class ClusterKeyTest {

    private static Path secret(Path dir, String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    }

    @Test
    void aSecretOfFewerThan32BytesIsRefusedNamingTheFileAndTheSameSecretGivesTheSameKey(@TempDir Path dir)
            throws Exception {
        Path shortOne = secret(dir, "short", "not-long-enough\n");
        assertThatThrownBy(() -> ClusterKey.fromFile(shortOne)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(shortOne.toString()).hasMessageContaining("holds 15 bytes")
                .hasMessageContaining("at least 32");
        String text = "a-shared-cluster-secret-of-forty-two-bytes";
        SecretKey one = ClusterKey.fromFile(secret(dir, "one", text));
        SecretKey two = ClusterKey.fromFile(secret(dir, "two", "  " + text + "\n"));
        SecretKey other = ClusterKey.fromFile(secret(dir, "other", text + "!"));
        assertThat(one.getEncoded()).as("white space at the ends does not count").isEqualTo(two.getEncoded());
        assertThat(one.getEncoded()).hasSize(32).isNotEqualTo(other.getEncoded());
    }

    @Test
    void membersWithTheKeyCommitAndAMemberWithAnotherKeyIsRefusedAndLogged(@TempDir Path dir) throws Exception {
        SecretKey key = ClusterKey.fromFile(secret(dir, "cluster.secret", "the-secret-every-member-of-the-cluster-has"));
        SecretKey wrong = ClusterKey.fromFile(secret(dir, "wrong.secret", "a-secret-of-somebody-else-of-40-bytes!!"));
        Logger logger = (Logger) LoggerFactory.getLogger(OtherKeyLog.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        RaftSettings base = RaftSettings.defaults(dir.resolve("data")).withLogUseFsync(false).withClusterKey(key);
        try (RaftTestMembers members = new RaftTestMembers(3, base)) {
            members.start(0);
            members.start(1);
            members.start(2, base.withClusterKey(wrong));
            Await.until(() -> members.group(0).isLeader() || members.group(1).isLeader(), Duration.ofSeconds(20),
                    Duration.ofMillis(10), members::describe);
            RaftGroup leader = members.group(0).isLeader() ? members.group(0) : members.group(1);
            leader.submit("with the key".getBytes(StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);

            // the members it asks to join log it (it never hears the group: their messages go to their view)
            Await.until(() -> lines.list.stream().anyMatch(e -> e.getFormattedMessage().matches("node-[12]: refused node-3.*")),
                    Duration.ofSeconds(20), Duration.ofMillis(10), () -> "the refusal logged: " + lines.list);
            assertThat(members.group(0).view()).as("the view of a member with the key")
                    .containsExactlyInAnyOrder("node-1", "node-2");
            assertThat(members.group(2).view()).as("the view of the member with another key").containsExactly("node-3");
            assertThat(members.group(2).leader()).as("a leader heard by the member with another key").isNull();
            assertThat(members.machine(2).applied()).as("entries it applied").isZero();
            List<String> warnings = lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
            assertThat(warnings).anySatisfy(w -> assertThat(w).contains("node-3", "another cluster key",
                    "cluster.secretFile"));
        } finally {
            logger.detachAppender(lines);
        }
    }
}
