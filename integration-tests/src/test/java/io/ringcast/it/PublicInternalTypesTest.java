package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A type under an {@code .internal} package is public only because another package needs it; this
 * pins which ones are, so a new one is a decision made in review rather than by accident. It scans
 * every Ringcast module on the test class path (class directories or jars) with plain Java.
 */
class PublicInternalTypesTest {

    /** Every public top-level type in an {@code .internal} package, and who needs it public. */
    private static final Map<String, String> EXPECTED = Map.ofEntries(
            Map.entry("io.ringcast.client.internal.ClientConfig", "client-java: RingcastClient.Builder builds it"),
            Map.entry("io.ringcast.client.internal.NettyRingcastClient", "client-java: RingcastClient.Builder returns it"),
            Map.entry("io.ringcast.cluster.internal.jgroups.BarrierLog", "cluster: ClusterNode gives it to its Raft group"),
            Map.entry("io.ringcast.cluster.internal.ClusterKey", "cluster: ClusterNode derives the key of cluster.secretFile"),
            Map.entry("io.ringcast.cluster.internal.LoggedPublish", "cluster: ClusterNode batches them"),
            Map.entry("io.ringcast.cluster.internal.PublishBatcher", "cluster: ClusterNode submits through it"),
            Map.entry("io.ringcast.cluster.internal.jgroups.SegmentedLog", "jgroups-raft: RAFT instantiates it by name"),
            Map.entry("io.ringcast.cluster.internal.jgroups.RaftGroup", "cluster: ClusterNode runs it"),
            Map.entry("io.ringcast.cluster.internal.jgroups.RaftSettings", "cluster: ClusterNode derives it from ReplicationSettings"),
            Map.entry("io.ringcast.cluster.internal.jgroups.RaftStack", "cluster: ClusterSettings names its port offset"),
            Map.entry("io.ringcast.cluster.internal.TopicLog", "cluster: both engines' state machines apply entries through it"),
            Map.entry("io.ringcast.cluster.internal.ratis.RatisGroups", "cluster: RatisEngine runs the Ratis groups through it"),
            Map.entry("io.ringcast.cluster.internal.ratis.TopicLogStateMachine", "cluster: RatisEngine gives one to each Ratis group"),
            Map.entry("io.ringcast.server.internal.FanOutHarness", "benchmark: FanOutBenchmark drives the fan-out without sockets"),
            Map.entry("io.ringcast.server.internal.FatalErrors", "server: Main names its exit status"),
            Map.entry("io.ringcast.server.internal.NodeRuntime", "server: RingcastServer starts and stops it"),
            Map.entry("io.ringcast.server.internal.ServerCounters", "server: RingcastServer.stats() reads them"),
            Map.entry("io.ringcast.server.internal.SignalExit", "server: Main and the sub command exit 0 on SIGTERM and Ctrl-C"));

    @Test
    void onlyTheTypesAnotherPackageNeedsArePublicInInternalPackages() throws Exception {
        Set<String> internal = new TreeSet<>();
        for (URL root : Collections.list(getClass().getClassLoader().getResources("io/ringcast"))) {
            internal.addAll(internalTypeNames(root));
        }
        assertThat(internal).as("the scan found the modules' internal packages")
                .anyMatch(n -> n.startsWith("io.ringcast.client.internal."))
                .anyMatch(n -> n.startsWith("io.ringcast.server.internal."))
                .anyMatch(n -> n.startsWith("io.ringcast.cluster.internal."));
        Set<String> publicOnes = new TreeSet<>();
        for (String name : internal) {
            if (Modifier.isPublic(Class.forName(name, false, getClass().getClassLoader()).getModifiers())) {
                publicOnes.add(name);
            }
        }
        assertThat(publicOnes).containsExactlyInAnyOrderElementsOf(EXPECTED.keySet());
    }

    /** Top-level classes under {@code io/ringcast/**}{@code /internal/} below {@code root}, a directory or in a jar. */
    private static List<String> internalTypeNames(URL root) throws IOException, URISyntaxException {
        Stream<String> paths;
        if (root.getProtocol().equals("jar")) {
            JarURLConnection connection = (JarURLConnection) root.openConnection();
            connection.setUseCaches(false); // a jar of our own to close, not the one the class loader reads
            try (JarFile jar = connection.getJarFile()) {
                paths = jar.stream().map(ZipEntry::getName).toList().stream();
            }
        } else {
            Path dir = Path.of(root.toURI()).getParent().getParent(); // the class directory
            try (Stream<Path> files = Files.walk(dir)) {
                paths = files.map(f -> dir.relativize(f).toString().replace('\\', '/')).toList().stream();
            }
        }
        return paths.filter(p -> p.startsWith("io/ringcast/") && p.contains("/internal/") && p.endsWith(".class")
                        && !p.contains("$") && !p.endsWith("package-info.class"))
                .map(p -> p.substring(0, p.length() - ".class".length()).replace('/', '.'))
                .toList();
    }
}
