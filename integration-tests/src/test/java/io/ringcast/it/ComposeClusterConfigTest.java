package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.EnvOverrides;
import io.ringcast.server.config.ServerConfig;
import io.ringcast.server.config.ServerConfig.Cluster.Member;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * compose.yaml's nodes as their containers see them, without Docker: each node's config file, from
 * the directory mounted into it, with its service's environment over it, loads and validates; its
 * members are the five services, each at the fixed address every container's /etc/hosts gives it;
 * its Raft log is in a volume of its own; the image exposes the ports it uses. SnakeYAML reads the
 * file, since compose files share settings through anchors and merge keys, which Jackson does not
 * resolve.
 */
class ComposeClusterConfigTest {
    private static final Path ROOT = Path.of("..");

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node) {
        return (Map<String, Object>) node;
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object node) {
        return (List<String>) node;
    }

    /** The file on this machine that the bind mount among {@code volumes} shows at {@code containerPath}. */
    private static Path mounted(List<String> volumes, String containerPath) {
        for (String volume : volumes) {
            String[] parts = volume.split(":");
            if (parts[0].startsWith(".") && containerPath.startsWith(parts[1] + "/")) {
                return ROOT.resolve(parts[0]).resolve(containerPath.substring(parts[1].length() + 1));
            }
        }
        throw new AssertionError(containerPath + " is in no directory of " + volumes);
    }

    @Test
    void everyNodeLoadsItsFileWithItsEnvironmentAndKnowsTheOthersByTheirServiceNames() throws IOException {
        Map<String, Object> compose = new Yaml().load(Files.readString(ROOT.resolve("compose.yaml")));
        Map<String, Object> services = map(compose.get("services"));
        assertThat(services).containsOnlyKeys("cluster-secret", "ringcast-1", "ringcast-2", "ringcast-3", "ringcast-4",
                "ringcast-5");
        Map<String, String> addresses = new LinkedHashMap<>();
        services.forEach((name, service) -> {
            if (name.startsWith("ringcast-")) {
                addresses.put(name, (String) map(map(map(service).get("networks")).get("ringcast")).get("ipv4_address"));
            }
        });
        // the secret: made once by the one-shot service in its volume, read from it by every node
        Map<String, Object> maker = map(services.get("cluster-secret"));
        assertThat(strings(maker.get("volumes"))).containsExactly("cluster-secret:/var/lib/ringcast/config");
        assertThat(String.join(" ", strings(maker.get("entrypoint")))).contains("cluster.secret", "umask 077");
        String exposed = DockerfileStage.runtime(ROOT.resolve("Dockerfile")).last("EXPOSE");

        for (int n = 1; n <= 5; n++) {
            String name = "ringcast-" + n;
            Map<String, Object> service = map(services.get(name));
            List<String> command = strings(service.get("command"));
            List<String> volumes = strings(service.get("volumes"));
            assertThat(command).containsExactly("--config", "/etc/ringcast/node-" + n + ".yaml");
            Path file = mounted(volumes, command.get(1));
            assertThat(file).as("config/cluster/node-N.yaml").isRegularFile();
            Map<String, String> environment = new LinkedHashMap<>();
            map(service.get("environment")).forEach((k, v) -> environment.put(k, String.valueOf(v)));
            EnvOverrides overrides = EnvOverrides.from(environment);
            assertThat(overrides.ignoredNames()).as("every RINGCAST_ variable is a key").isEmpty();

            ServerConfig config = ConfigLoader.load(file, overrides);

            ServerConfig.Cluster cluster = config.cluster();
            assertThat(cluster.enabled()).isTrue();
            assertThat(cluster.nodeName()).isEqualTo("node-" + n);
            assertThat(service.get("hostname")).isEqualTo(name);
            assertThat(cluster.members()).as(name).hasSize(5)
                    .allSatisfy(m -> assertThat(strings(service.get("extra_hosts")))
                            .as("in /etc/hosts of " + name).contains(m.host() + ":" + addresses.get(m.host())))
                    .filteredOn(m -> m.name().equals(cluster.nodeName()))
                    .extracting(Member::host).containsExactly(name);
            assertThat(cluster.secretFile()).as("encrypted between nodes").isEqualTo("/run/ringcast-secret/cluster.secret");
            assertThat(volumes).as("the secret's volume, read-only").contains("cluster-secret:/run/ringcast-secret:ro");
            assertThat(map(map(service.get("depends_on")).get("cluster-secret")).get("condition"))
                    .isEqualTo("service_completed_successfully");
            assertThat(volumes).as("the Raft log in a volume of its own")
                    .contains(name + "-data:" + cluster.dataDir());
            assertThat(map(compose.get("volumes"))).containsKey(name + "-data");
            assertThat(config.server().host()).isEqualTo("0.0.0.0");
            assertThat(strings(service.get("ports"))).containsExactly("808" + n + ":" + config.server().port());
            assertThat(environment.get("RINGCAST_SERVER_PORT")).as("the port the image's health check asks")
                    .isEqualTo(String.valueOf(config.server().port()));
            int membershipPort = cluster.members().stream().filter(m -> m.name().equals(cluster.nodeName()))
                    .findFirst().orElseThrow().membershipPort();
            assertThat(exposed.split("\\s+")).as("the image's EXPOSE").contains(String.valueOf(config.server().port()),
                    String.valueOf(membershipPort), String.valueOf(membershipPort + 1000));
        }
    }
}
