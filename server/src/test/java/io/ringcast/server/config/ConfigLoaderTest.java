package io.ringcast.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.Transport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ConfigLoaderTest {

    private static final ServerConfig SPEC_DEFAULTS = new ServerConfig(
            new ServerConfig.Server("0.0.0.0", 8080, 0, Transport.AUTO),
            new ServerConfig.Limits(1048576, 256, 16, 1024, 8388608L, 5000L, 10000L, 1000000, 200000, 100000, 1024, 0, 16384, 8192, 1000, 16, 500, 90000, 8388608L, 67108864L, 180000, 131072, 0L, 0, 0, 80),
            new ServerConfig.History(64, 8388608L, 0L, 0L),
            new ServerConfig.Pipeline(65536, 65536, 67108864, WaitStrategyKind.BLOCKING, FlushPolicy.ADAPTIVE, 10000),
            new ServerConfig.Session(120000L),
            new Features(true, false, false, Conflation.OFF, 256, 262144L, List.of()),
            new ServerConfig.State(""),
            new ServerConfig.Security("", "", List.of(), List.of("demo"),
                    List.of(new ServerConfig.Security.Role("demo", List.of("demo/#"), List.of("demo/#"))), List.of(), "", ""),
            new ServerConfig.Demo(false, 500, 2000),
            new ServerConfig.Cluster(false, "", "", true, 5000L, 1000L, 600L, 16L * 1024 * 1024, List.of(), "jgroups", 0, ""));

    @TempDir
    Path dir;

    // --- defaults and merging ---------------------------------------------------------------------

    @Test
    void defaultsAreTheDocumentedValues() {
        assertThat(ServerConfig.defaults()).isEqualTo(SPEC_DEFAULTS);
        assertThat(ConfigLoader.defaults()).isSameAs(ServerConfig.defaults());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\n", "# nothing but a comment\n", "---\n", "server:\n  # port: 9090\n"})
    void emptyInputMeansAllDefaults(String yaml) {
        assertThat(ConfigLoader.fromYaml(yaml)).isEqualTo(SPEC_DEFAULTS);
    }

    @Test
    void emptyFileMeansAllDefaults() throws IOException {
        Path file = Files.writeString(dir.resolve("server.yaml"), "");
        assertThat(ConfigLoader.load(file)).isEqualTo(SPEC_DEFAULTS);
    }

    @Test
    void partialFileOverridesOnlyWhatItNames() throws IOException {
        Path file = Files.writeString(dir.resolve("server.yaml"), """
                server:
                  port: 9090
                limits:
                  outboundQueueBytes: 65536
                pipeline:
                  waitStrategy: busy-spin
                  flushPolicy: max-delay
                """);

        ServerConfig config = ConfigLoader.load(file);

        assertThat(config).isEqualTo(new ServerConfig(
                new ServerConfig.Server("0.0.0.0", 9090, 0, Transport.AUTO),
                new ServerConfig.Limits(1048576, 256, 16, 1024, 65536L, 5000L, 10000L, 1000000, 200000, 100000, 1024, 0, 16384, 8192, 1000, 16, 500, 90000, 8388608L, 67108864L, 180000, 131072, 0L, 0, 0, 80),
                SPEC_DEFAULTS.history(),
                new ServerConfig.Pipeline(65536, 65536, 67108864, WaitStrategyKind.BUSY_SPIN, FlushPolicy.MAX_DELAY, 10000),
                SPEC_DEFAULTS.session(),
                SPEC_DEFAULTS.features(),
                SPEC_DEFAULTS.state(),
                SPEC_DEFAULTS.security(),
                SPEC_DEFAULTS.demo(),
                SPEC_DEFAULTS.cluster()));
    }

    @Test
    void derivedValues() {
        ServerConfig config = ConfigLoader.fromYaml("limits: {maxPathBytes: 100, maxPathDepth: 5}\nserver: {ioThreads: 3}");
        assertThat(config.limits().pathLimits()).isEqualTo(new PathLimits(100, 5));
        assertThat(config.server().effectiveIoThreads()).isEqualTo(3);
        assertThat(SPEC_DEFAULTS.server().effectiveIoThreads()).isEqualTo(Runtime.getRuntime().availableProcessors());
    }

    @Test
    void shippedConfigFileIsTheDefaultsWrittenOutWithTheDemoOn() {
        // config/server.yaml repeats every default for operators to edit; when a default changes,
        // change it there too. Its one difference: the README's run command opens onto a live demo.
        ServerConfig defaults = ServerConfig.defaults();
        ServerConfig.Demo demoOn = new ServerConfig.Demo(true, defaults.demo().instruments(),
                defaults.demo().updatesPerSecond());
        assertThat(ConfigLoader.load(Path.of("..", "config", "server.yaml"))).isEqualTo(new ServerConfig(
                defaults.server(), defaults.limits(), defaults.history(), defaults.pipeline(), defaults.session(),
                defaults.features(), defaults.state(), defaults.security(), demoOn, defaults.cluster()));
    }

    // --- where the config comes from --------------------------------------------------------------

    @Test
    void resolvePrefersTheOptionThenTheWorkingDirectoryFileThenTheDefaults() throws IOException {
        assertThat(ConfigLoader.resolve(null, dir, EnvOverrides.none())).isEqualTo(SPEC_DEFAULTS);

        Files.createDirectories(dir.resolve("config"));
        Files.writeString(dir.resolve("config/server.yaml"), "server:\n  port: 9001\n");
        assertThat(ConfigLoader.resolve(null, dir, EnvOverrides.none()).server().port()).isEqualTo(9001);

        Path option = Files.writeString(dir.resolve("other.yaml"), "server:\n  port: 9002\n");
        assertThat(ConfigLoader.resolve(option, dir, EnvOverrides.none()).server().port()).isEqualTo(9002);
    }

    @Test
    void missingFileIsAnError() {
        Path missing = dir.resolve("nope.yaml");
        assertThatThrownBy(() -> ConfigLoader.resolve(missing, dir, EnvOverrides.none()))
                .isInstanceOf(ConfigException.class)
                .hasMessage(missing + ": file not found");
    }

    // --- unknown keys -----------------------------------------------------------------------------

    @Test
    void unknownNestedKeyIsNamedWithTheFileAndTheKnownKeys() throws IOException {
        Path file = Files.writeString(dir.resolve("server.yaml"), "server:\n  prot: 8080\n");

        assertThatThrownBy(() -> ConfigLoader.load(file))
                .isInstanceOf(ConfigException.class)
                .hasMessage(file + ": unknown key 'server.prot' (known keys under 'server': host, port, ioThreads, transport)")
                .satisfies(e -> assertThat(((ConfigException) e).key()).hasValue("server.prot"))
                .satisfies(e -> assertThat(((ConfigException) e).source()).hasValue(file.toString()));
    }

    @Test
    void clusterSectionIsCheckedWhenEnabled() {
        String members = "  members:\n    - {name: a, host: 127.0.0.1, membershipPort: 7801}\n"
                + "    - {name: b, host: 127.0.0.1, membershipPort: 7802}\n";
        ServerConfig ok = ConfigLoader.fromYaml("cluster:\n  enabled: true\n  nodeName: b\n" + members);
        assertThat(ok.cluster().members()).hasSize(2);
        assertThat(ok.cluster().members().get(1)).isEqualTo(new ServerConfig.Cluster.Member("b", "127.0.0.1", 7802));
        assertThatThrownBy(() -> ConfigLoader.fromYaml("cluster:\n  enabled: true\n  nodeName: c\n" + members))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("key 'cluster.nodeName' must name one of cluster.members");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("cluster:\n  enabled: true\n  nodeName: a\n" + members
                + "    - {name: a, host: 127.0.0.1, membershipPort: 7803}\n"))
                .hasMessageContaining("key 'cluster.members[2].name': node name 'a' is listed twice");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("cluster:\n  enabled: true\n  nodeName: a\n" + members
                + "    - {name: c, host: 127.0.0.1, membershipPort: 7801}\n"))
                .hasMessageContaining("key 'cluster.members[2]': a port of 127.0.0.1 is used twice");
        assertThatThrownBy(() -> ConfigLoader.fromYaml("cluster:\n  enabled: true\n  nodeName: a\n"))
                .hasMessageContaining("key 'cluster.members' must list every node");
        // off: nothing is asked of the rest
        assertThat(ConfigLoader.fromYaml("cluster:\n  enabled: false\n  nodeName: nobody\n").cluster().enabled()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"clusters", "metrics", "auth", "Server"})
    void unknownSectionIsNamed(String section) {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(section + ":\n  enabled: true\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("unknown section '" + section
                        + "' (known sections: server, limits, history, pipeline, session, features, state, security, demo, cluster)");
    }

    // --- wrong types and shapes -------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            server:\\n  port: eighty              | key 'server.port' expects an integer, got "eighty"
            server:\\n  port: "8080"              | key 'server.port' expects an integer, got "8080"
            server:\\n  port: 80.5                | key 'server.port' expects an integer, got 80.5
            server:\\n  port: true                | key 'server.port' expects an integer, got true
            server:\\n  port:                     | key 'server.port' expects an integer, got null
            server:\\n  port: [80]                | key 'server.port' expects an integer, got a list
            server:\\n  host: 8080                | key 'server.host' expects a string, got 8080
            server:\\n  host:                     | key 'server.host' expects a string, got null
            limits:\\n  maxPathBytes: 99999999999 | key 'limits.maxPathBytes' expects an integer that fits in 32 bits, got 99999999999
            session:\\n  idleTimeoutMs: 1e3       | key 'session.idleTimeoutMs' expects an integer, got 1000.0
            server: 8080                          | section 'server' must be a mapping of keys (host, port, ioThreads, transport), got 8080
            limits: [1, 2]                        | section 'limits' must be a mapping of keys (maxFrameBytes, maxPathBytes, maxPathDepth, maxSubscriptionsPerSession, maxSubscriptions, maxSubscriptionsPerPrincipal, heapRefusePercent, outboundQueueBytes, socketSendBufferBytes, incompleteMessageBytes, slowConsumerCloseGraceMs, handshakeTimeoutMs, maxValueBytes, maxTopics, maxConnections, maxConnectionsBeforeUpgrade, publishRatePerSession, publisherLedgers, publisherLedgersPerPrincipal, maxViews, maxViewsPerSession, maxConnectionsPerPrincipal, maxViewsPerPrincipal, subscribeBytesPerSession, subscribeBytesPerPrincipal, maxTopicsPerPrincipal), got a list
            just text                             | the top level must be a mapping of sections (server, limits, history, pipeline, session, features, state, security, demo, cluster), got "just text"
            """)
    void wrongTypeNamesTheKeyAndTheExpectedType(String yaml, String message) {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(yaml.replace("\\n", "\n")))
                .isInstanceOf(ConfigException.class)
                .hasMessage(message);
    }

    // --- ranges -----------------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            server.port                       | -1         | must be between 0 and 65535, got -1
            server.port                       | 65536      | must be between 0 and 65535, got 65536
            server.ioThreads                  | -1         | must be 0 (one per core) or between 1 and 256, got -1
            server.ioThreads                  | 257        | must be 0 (one per core) or between 1 and 256, got 257
            server.host                       | '""'       | must be a host name or IP address, got ""
            server.host                       | 'a b'      | must be a host name or IP address, got "a b"
            limits.maxFrameBytes              | 4095       | must be between 4096 and 67108864, got 4095
            limits.maxFrameBytes              | 67108865   | must be between 4096 and 67108864, got 67108865
            limits.maxPathBytes               | 0          | must be between 1 and 65535, got 0
            limits.maxPathBytes               | 65536      | must be between 1 and 65535, got 65536
            limits.maxPathDepth               | 0          | must be between 1 and 128, got 0
            limits.maxPathDepth               | 129        | must be between 1 and 128, got 129
            limits.maxSubscriptionsPerSession | 0          | must be at least 1, got 0
            limits.outboundQueueBytes         | 65535      | must be at least 65536, got 65535
            limits.slowConsumerCloseGraceMs   | -1         | must be between 0 and 60000, got -1
            limits.slowConsumerCloseGraceMs   | 60001      | must be between 0 and 60000, got 60001
            limits.handshakeTimeoutMs         | 99         | must be between 100 and 600000, got 99
            limits.handshakeTimeoutMs         | 600001     | must be between 100 and 600000, got 600001
            limits.maxConnectionsBeforeUpgrade | 0         | must be between 1 and 10000000, got 0
            limits.maxConnectionsBeforeUpgrade | 10000001  | must be between 1 and 10000000, got 10000001
            limits.heapRefusePercent          | 49         | must be 0 (never refused for the heap) or between 50 and 95, got 49
            limits.heapRefusePercent          | 96         | must be 0 (never refused for the heap) or between 50 and 95, got 96
            history.length                    | 0          | must be between 1 and 65536, got 0
            history.length                    | 65537      | must be between 1 and 65536, got 65537
            pipeline.inboundRingSize          | 32         | must be a power of two between 64 and 16777216, got 32
            pipeline.inboundRingSize          | 1000       | must be a power of two between 64 and 16777216, got 1000
            pipeline.inboundRingSize          | 33554432   | must be a power of two between 64 and 16777216, got 33554432
            pipeline.fanOutRingSize           | 0          | must be a power of two between 64 and 16777216, got 0
            pipeline.fanOutRingSize           | 65535      | must be a power of two between 64 and 16777216, got 65535
            session.idleTimeoutMs             | -1         | must be 0 (never) or between 1000 and 3600000, got -1
            session.idleTimeoutMs             | 999        | must be 0 (never) or between 1000 and 3600000, got 999
            session.idleTimeoutMs             | 3600001    | must be 0 (never) or between 1000 and 3600000, got 3600001
            """)
    void outOfRangeValueIsRejectedNamingTheKey(String key, String value, String expected) {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(ConfigFixtures.setting(key, value)))
                .isInstanceOf(ConfigException.class)
                .hasMessage("key '" + key + "' " + expected)
                .satisfies(e -> assertThat(((ConfigException) e).key()).hasValue(key));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            server.port                       | 0
            server.port                       | 65535
            server.ioThreads                  | 1
            server.ioThreads                  | 256
            server.host                       | '"::1"'
            server.host                       | localhost
            limits.maxFrameBytes              | 4096
            limits.maxFrameBytes              | 67108864
            limits.maxPathBytes               | 1
            limits.maxPathBytes               | 65535
            limits.maxPathDepth               | 1
            limits.maxPathDepth               | 128
            limits.maxSubscriptionsPerSession | 1
            limits.maxSubscriptionsPerSession | 2147483647
            limits.outboundQueueBytes         | 65536
            limits.outboundQueueBytes         | 9223372036854775807
            limits.slowConsumerCloseGraceMs   | 0
            limits.slowConsumerCloseGraceMs   | 60000
            limits.handshakeTimeoutMs         | 100
            limits.handshakeTimeoutMs         | 600000
            limits.maxConnectionsBeforeUpgrade | 1
            limits.maxConnectionsBeforeUpgrade | 10000000
            history.length                    | 1
            history.length                    | 65536
            pipeline.inboundRingSize          | 64
            pipeline.inboundRingSize          | 16777216
            pipeline.fanOutRingSize           | 128
            pipeline.fanOutRingSize           | 16777216
            session.idleTimeoutMs             | 0
            session.idleTimeoutMs             | 1000
            session.idleTimeoutMs             | 3600000
            """)
    void edgeOfRangeValueIsAccepted(String key, String value) {
        ServerConfig config = ConfigLoader.fromYaml(ConfigFixtures.setting(key, value));

        JsonNode bound = new ObjectMapper().valueToTree(config).at("/" + key.replace('.', '/'));
        assertThat(bound.asText()).isEqualTo(value.replace("\"", ""));
    }

    // --- enum spelling ----------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource({"immediate, IMMEDIATE", "end-of-batch, END_OF_BATCH", "max-delay, MAX_DELAY", "adaptive, ADAPTIVE"})
    void flushPolicyIsSpelledInLowerCaseWithHyphens(String spelling, FlushPolicy policy) {
        assertThat(ConfigLoader.fromYaml("pipeline:\n  flushPolicy: " + spelling).pipeline().flushPolicy())
                .isEqualTo(policy);
    }

    @Test
    void flushMaxDelayOutOfRangeNamesTheKey() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("pipeline:\n  flushMaxDelayUs: 0"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("pipeline.flushMaxDelayUs");
    }

    @ParameterizedTest
    @CsvSource({"blocking, BLOCKING", "sleeping, SLEEPING", "yielding, YIELDING", "busy-spin, BUSY_SPIN"})
    void waitStrategyIsSpelledInLowerCaseWithHyphens(String spelling, WaitStrategyKind kind) {
        assertThat(ConfigLoader.fromYaml("pipeline:\n  waitStrategy: " + spelling).pipeline().waitStrategy())
                .isEqualTo(kind);
        assertThat(kind.yamlName()).isEqualTo(spelling);
    }

    @ParameterizedTest
    @ValueSource(strings = {"fast", "BLOCKING", "busy_spin", "1", "''"})
    void otherWaitStrategySpellingsAreRejected(String spelling) {
        String shown = spelling.equals("1") ? "1" : "\"" + spelling.replace("'", "") + "\"";
        assertThatThrownBy(() -> ConfigLoader.fromYaml("pipeline:\n  waitStrategy: " + spelling))
                .isInstanceOf(ConfigException.class)
                .hasMessage("key 'pipeline.waitStrategy' must be one of blocking, sleeping, yielding, busy-spin, got "
                        + shown);
    }

    // --- YAML syntax ------------------------------------------------------------------------------

    @Test
    void syntaxErrorNamesFileLineAndColumn() throws IOException {
        Path file = Files.writeString(dir.resolve("server.yaml"), "server:\n port: 1\n  host: x\n");

        assertThatThrownBy(() -> ConfigLoader.load(file))
                .isInstanceOf(ConfigException.class)
                .hasMessage(file + ": YAML syntax error at line 3, column 7: mapping values are not allowed here")
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEmpty());
    }

    @Test
    void tabIndentationIsASyntaxError() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("server:\n\tport: 1\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("YAML syntax error at line 2, column 1: found character '\\t(TAB)'");
    }

    @Test
    void duplicateKeyIsNamed() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("server:\n  port: 1\n  port: 2\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("duplicate key 'server.port' at line 3");
    }

    @Test
    void secondDocumentIsAnError() {
        assertThatThrownBy(() -> ConfigLoader.fromYaml("server:\n  port: 1\n---\nserver:\n  port: 2\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("holds more than one YAML document");
    }
}
