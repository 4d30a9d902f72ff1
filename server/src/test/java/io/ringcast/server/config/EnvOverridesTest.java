package io.ringcast.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.ringcast.server.config.ServerConfig.Cluster.Member;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code RINGCAST_*} environment variables as config keys: the name of each key, values read as
 * YAML, set over the file or the defaults, and refusals that name the variable.
 */
class EnvOverridesTest {

    @TempDir
    Path dir;

    private Path file(String yaml) throws IOException {
        return Files.writeString(dir.resolve("server.yaml"), yaml);
    }

    /** What reading {@code env} and loading {@code yaml} with it is refused with; null if accepted. */
    private ConfigException refusal(Map<String, String> env, String yaml) throws IOException {
        Path file = file(yaml);
        return catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(file, EnvOverrides.from(env)));
    }

    // --- the mapping ------------------------------------------------------------------------------

    @Test
    void keyIsPrefixedUpperCasedSegmentsWithCamelCaseWordsNotSplit() {
        assertThat(EnvOverrides.variableFor("server.port")).isEqualTo("RINGCAST_SERVER_PORT");
        assertThat(EnvOverrides.variableFor("cluster.failureDetectionMs")).isEqualTo("RINGCAST_CLUSTER_FAILUREDETECTIONMS");
        assertThat(EnvOverrides.variableFor("security.jwtHs256Secret")).isEqualTo("RINGCAST_SECURITY_JWTHS256SECRET");
    }

    @Test
    void everyKeyButSectionsHasItsOwnVariableThatReadsBackToIt() {
        List<String> keys = new ArrayList<>();
        ConfigLoader.defaultsTree().properties().forEach(section ->
                section.getValue().fieldNames().forEachRemaining(name -> keys.add(section.getKey() + "." + name)));

        assertThat(EnvOverrides.KEYS_BY_VARIABLE.values()).containsExactlyElementsOf(keys);
        for (String key : keys) {
            assertThat(EnvOverrides.KEYS_BY_VARIABLE.get(EnvOverrides.variableFor(key))).as(key).isEqualTo(key);
        }
        assertThat(EnvOverrides.KEYS_BY_VARIABLE.keySet()).doesNotContainAnyElementsOf(EnvOverrides.NOT_CONFIG);
    }

    // --- values, and what they are set over -------------------------------------------------------

    @Test
    void variablesAreSetOverTheFileWithValuesReadAsYaml() throws IOException {
        Path file = file("server: {host: 127.0.0.1, port: 9000}\nfeatures: {deltas: false, compression: true, conflation: always}\n");
        EnvOverrides env = EnvOverrides.from(Map.of(
                "RINGCAST_SERVER_PORT", "9001",
                "RINGCAST_FEATURES_DELTAS", "true",
                "RINGCAST_FEATURES_CONFLATION", "off", // YAML 1.1 reads a boolean here, as in the file
                "RINGCAST_SECURITY_ALLOWEDORIGINS", "[\"https://app.example.com\", https://b.example.com]"));

        ServerConfig config = ConfigLoader.load(file, env);

        assertThat(config.server().port()).isEqualTo(9001);
        assertThat(config.server().host()).as("from the file").isEqualTo("127.0.0.1");
        assertThat(config.features().deltas()).isTrue();
        assertThat(config.features().compression()).as("from the file").isTrue();
        assertThat(config.features().conflation()).isEqualTo(Conflation.OFF);
        assertThat(config.security().allowedOrigins()).containsExactly("https://app.example.com", "https://b.example.com");
        assertThat(env.names()).containsExactly("RINGCAST_FEATURES_CONFLATION", "RINGCAST_FEATURES_DELTAS",
                "RINGCAST_SECURITY_ALLOWEDORIGINS", "RINGCAST_SERVER_PORT");
    }

    @Test
    void aListOfMappingsIsOneFlowValue() throws IOException {
        EnvOverrides env = EnvOverrides.from(Map.of(
                "RINGCAST_CLUSTER_ENABLED", "true",
                "RINGCAST_CLUSTER_NODENAME", "node-2",
                "RINGCAST_CLUSTER_MEMBERS", "[{name: node-1, host: ringcast-1, membershipPort: 7800},"
                        + " {name: node-2, host: ringcast-2, membershipPort: 7800}]"));

        ServerConfig.Cluster cluster = ConfigLoader.load(file(""), env).cluster();

        assertThat(cluster.nodeName()).isEqualTo("node-2");
        assertThat(cluster.members()).containsExactly(new Member("node-1", "ringcast-1", 7800),
                new Member("node-2", "ringcast-2", 7800));
    }

    @Test
    void withoutAFileVariablesAreSetOverTheEmbeddedDefaults() {
        EnvOverrides env = EnvOverrides.from(Map.of("RINGCAST_SERVER_PORT", "9002", "RINGCAST_DEMO_ENABLED", "true"));

        ServerConfig config = ConfigLoader.resolve(null, dir, env);

        assertThat(config.server().port()).isEqualTo(9002);
        assertThat(config.demo().enabled()).isTrue();
        assertThat(config.limits()).isEqualTo(ServerConfig.defaults().limits());
    }

    @Test
    void anEmptyValueIsRefusedAndTwoQuotesAreTheEmptyString() throws IOException {
        ConfigException empty = catchThrowableOfType(ConfigException.class,
                () -> EnvOverrides.from(Map.of("RINGCAST_STATE_FILE", "")));
        assertThat(empty).hasMessage("environment variable RINGCAST_STATE_FILE: is empty, which would leave key "
                + "'state.file' empty; for an empty string write \"\" (quotes included)");

        EnvOverrides quotes = EnvOverrides.from(Map.of("RINGCAST_STATE_FILE", "\"\""));
        assertThat(ConfigLoader.load(file("state: {file: saved.bin}\n"), quotes).state().file()).isEmpty();
    }

    @Test
    void otherVariablesAreLeftAloneAndThoseNamingNoSectionListed() {
        EnvOverrides env = EnvOverrides.from(Map.of(
                "PATH", "/usr/bin",
                "RINGCAST_LOG_LEVEL", "DEBUG",
                "RINGCAST_SERVICE_HOST", "10.0.0.7", // a Kubernetes service link
                "ringcast_server_port", "1"));

        assertThat(env.isEmpty()).isTrue();
        assertThat(env.names()).isEmpty();
        assertThat(env.ignoredNames()).containsExactly("RINGCAST_SERVICE_HOST");
    }

    @Test
    void namesAreShownNeverValues() {
        String secret = "a-secret-of-at-least-thirty-two-bytes!";
        EnvOverrides env = EnvOverrides.from(Map.of("RINGCAST_SECURITY_JWTHS256SECRET", secret));

        assertThat(env.toString()).isEqualTo("environment overrides RINGCAST_SECURITY_JWTHS256SECRET");
        assertThat(env.names()).containsExactly("RINGCAST_SECURITY_JWTHS256SECRET");
    }

    // --- refusals ---------------------------------------------------------------------------------

    @Test
    void aVariableNamingNoKeyOfASectionIsRefusedNamingIt() throws IOException {
        ConfigException e = refusal(Map.of("RINGCAST_SERVER_PROT", "8080"), "");

        assertThat(e).hasMessage("environment variable RINGCAST_SERVER_PROT: names no key of section 'server' "
                + "(its variables: RINGCAST_SERVER_HOST, RINGCAST_SERVER_PORT, RINGCAST_SERVER_IOTHREADS, RINGCAST_SERVER_TRANSPORT)");
        assertThat(e.source()).hasValue("environment variable RINGCAST_SERVER_PROT");
    }

    @Test
    void aSectionAloneIsNotAKey() throws IOException {
        assertThat(refusal(Map.of("RINGCAST_DEMO", "{enabled: true}"), "")).hasMessage(
                "environment variable RINGCAST_DEMO: names no key of section 'demo' (its variables: "
                        + "RINGCAST_DEMO_ENABLED, RINGCAST_DEMO_INSTRUMENTS, RINGCAST_DEMO_UPDATESPERSECOND)");
    }

    @Test
    void camelCaseWordsSplitByUnderscoresAreRefusedWithTheNameToWrite() throws IOException {
        assertThat(refusal(Map.of("RINGCAST_CLUSTER_FAILURE_DETECTION_MS", "2000"), "").getMessage()).startsWith(
                "environment variable RINGCAST_CLUSTER_FAILURE_DETECTION_MS: names no key of section 'cluster'; "
                        + "for 'cluster.failureDetectionMs' write RINGCAST_CLUSTER_FAILUREDETECTIONMS "
                        + "(the words of a camelCase key are not split by '_') (its variables: RINGCAST_CLUSTER_ENABLED, ");
    }

    @Test
    void aBadValueIsRefusedNamingTheVariableAndTheKey() throws IOException {
        ConfigException word = refusal(Map.of("RINGCAST_SERVER_PORT", "eighty"), "server: {port: 9000}\n");
        assertThat(word).hasMessage("environment variable RINGCAST_SERVER_PORT: key 'server.port' expects an integer, "
                + "got \"eighty\"");
        assertThat(word.key()).hasValue("server.port");

        assertThat(refusal(Map.of("RINGCAST_SERVER_PORT", "\"9000\""), "")).hasMessage(
                "environment variable RINGCAST_SERVER_PORT: key 'server.port' expects an integer, got \"9000\"");
        assertThat(refusal(Map.of("RINGCAST_SERVER_PORT", "70000"), "")).hasMessage(
                "environment variable RINGCAST_SERVER_PORT: key 'server.port' must be between 0 and 65535, got 70000");
    }

    @Test
    void aBadEntryOfAListIsRefusedNamingTheVariableThatGaveTheList() throws IOException {
        ConfigException e = refusal(Map.of("RINGCAST_CLUSTER_MEMBERS", "[{name: node-1, host: h1, membershipPort: 7800},"
                + " {name: node-2, membershipPort: 7800}]"), "cluster: {enabled: true, nodeName: node-1}\n");

        assertThat(e).hasMessage("environment variable RINGCAST_CLUSTER_MEMBERS: key 'cluster.members[1].host' "
                + "expects a string, got nothing");
    }

    @Test
    void aValueThatIsNotYamlIsRefusedNamingTheVariable() {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> EnvOverrides.from(Map.of(
                "RINGCAST_CLUSTER_MEMBERS", "[{name: node-1, host: h1")));

        assertThat(e.getMessage()).startsWith("environment variable RINGCAST_CLUSTER_MEMBERS: YAML syntax error at line 1");
    }

    @Test
    void aFaultAtAKeyOfTheFileNamesTheFileAndTheVariablesInPlay() throws IOException {
        Path file = file("cluster: {enabled: true, nodeName: node-9}\n");
        EnvOverrides env = EnvOverrides.from(Map.of("RINGCAST_CLUSTER_MEMBERS",
                "[{name: node-1, host: ringcast-1, membershipPort: 7800}]"));

        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoader.load(file, env));

        assertThat(e).hasMessage(file + " with environment overrides RINGCAST_CLUSTER_MEMBERS: key 'cluster.nodeName' "
                + "must name one of cluster.members [node-1], got \"node-9\"");
    }

    /** Each refusal docs/configuration.md shows, with the variable that gives it; the doc may show no other. */
    @Test
    void everyExampleRefusalInTheDocIsWhatTheLoaderSays() throws IOException {
        String doc = Files.readString(Path.of("..", "docs", "configuration.md"), StandardCharsets.UTF_8);
        Matcher block = Pattern.compile("Examples of refused variables:\\s*```\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertThat(block.find()).as("the examples block of docs/configuration.md").isTrue();
        List<Map<String, String>> variables = List.of(
                Map.of("RINGCAST_SERVER_PROT", "8080"),
                Map.of("RINGCAST_SERVER_PORT", "eighty"),
                Map.of("RINGCAST_STATE_FILE", ""));

        List<String> said = new ArrayList<>();
        for (Map<String, String> env : variables) {
            said.add(refusal(env, "").getMessage());
        }

        assertThat(block.group(1).lines().toList()).containsExactlyElementsOf(said);
    }

    @Test
    void theVariablesTheLogbackConfigsReadAreTheOnesThatAreNotConfigKeys() throws IOException {
        Pattern variable = Pattern.compile("RINGCAST_[A-Z0-9_]+");
        Set<String> read = new java.util.TreeSet<>();
        for (String file : List.of("server/src/main/resources/logback.xml", "config/logback.xml")) {
            Matcher m = variable.matcher(Files.readString(Path.of("..").resolve(file), StandardCharsets.UTF_8));
            while (m.find()) {
                read.add(m.group());
            }
        }
        assertThat(EnvOverrides.NOT_CONFIG).containsExactlyInAnyOrderElementsOf(read);
    }

    /** The docs and deployment files name real variables, but for the examples of what is not one. */
    @Test
    void everyVariableTheDocsAndDeploymentFilesNameIsAKeyOrAnExampleOfWhatIsNot() throws IOException {
        Set<String> notKeys = Set.of("RINGCAST_SERVER_PROT", "RINGCAST_SERVER", "RINGCAST_SERVICE_HOST", "RINGCAST_PORT");
        List<String> files = List.of("README.md", "docs/configuration.md", "docs/operations.md", "Dockerfile",
                "compose.yaml", "packaging/systemd/ringcast.service");
        Pattern variable = Pattern.compile("RINGCAST_[A-Z0-9_]+");

        for (String file : files) {
            Matcher m = variable.matcher(Files.readString(Path.of("..").resolve(file), StandardCharsets.UTF_8));
            while (m.find()) {
                assertThat(m.group()).as("a variable named in " + file)
                        .satisfiesAnyOf(v -> assertThat(EnvOverrides.KEYS_BY_VARIABLE).containsKey(v),
                                v -> assertThat(EnvOverrides.NOT_CONFIG).contains(v),
                                v -> assertThat(notKeys).contains(v));
            }
        }
    }
}
