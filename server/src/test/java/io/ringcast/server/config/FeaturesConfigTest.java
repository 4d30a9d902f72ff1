package io.ringcast.server.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code features} section: its shape, its defaults, and errors that name the bad entry. */
class FeaturesConfigTest {

    @Test
    void theIssueShapeBindsWithPartialOverrides() {
        ServerConfig config = ConfigLoader.fromYaml("""
                features:
                  lastValueCache: true
                  deltas: false
                  compression: false
                  conflation: off
                  overrides:
                    - selector: "fx/#"
                      deltas: true
                      conflation: on-backpressure
                    - selector: "events/+"
                      lastValueCache: false
                """);

        Features f = config.features();
        assertThat(f.conflation()).as("unquoted off is the policy, not YAML's boolean").isEqualTo(Conflation.OFF);
        assertThat(f.overrides()).containsExactly(
                new Features.SubtreeOverride("fx/#", null, true, null, Conflation.ON_BACKPRESSURE),
                new Features.SubtreeOverride("events/+", false, null, null, null));
        assertThat(f.compressionAnywhere()).isFalse();
    }

    @Test
    void compressionInAnyOverrideMeansTheServerNegotiatesIt() {
        Features f = ConfigLoader.fromYaml("features:\n  overrides:\n    - selector: \"a/#\"\n      compression: true\n")
                .features();

        assertThat(f.compression()).isFalse();
        assertThat(f.compressionAnywhere()).isTrue();
    }

    @Test
    void theBacklogIsCappedAtHalfTheSlowConsumerLimit() {
        ServerConfig config = ConfigLoader.fromYaml("limits:\n  outboundQueueBytes: 65536\n");

        assertThat(config.features().effectiveConflationBacklogBytes(config.limits().outboundQueueBytes()))
                .isEqualTo(32768);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            features:\\n  conflation: sometimes | key 'features.conflation' must be one of off, on-backpressure, always, got "sometimes"
            features:\\n  delta: true | unknown key 'features.delta' (known keys under 'features': lastValueCache, deltas, compression, conflation, compressionMinBytes, conflationBacklogBytes, expireAfterMs, overrides)
            features:\\n  deltas: "yes" | key 'features.deltas' expects true or false, got "yes"
            features:\\n  overrides: {selector: a} | key 'features.overrides' expects a list, got a mapping
            features:\\n  overrides:\\n    - selector: "fx/#"\\n      delta: true | unknown key 'features.overrides[0].delta'
            features:\\n  overrides:\\n    - selector: "fx/#"\\n      deltas: maybe | key 'features.overrides[0].deltas' expects true or false, got "maybe"
            features:\\n  overrides:\\n    - deltas: true | key 'features.overrides[0].selector' is required
            features:\\n  overrides:\\n    - selector: "fx/#/bid"\\n      deltas: true | key 'features.overrides[0].selector': invalid selector 'fx/#/bid': '#' must be the last segment
            features:\\n  overrides:\\n    - selector: "fx/#"\\n      deltas: true\\n    - selector: "fx/#"\\n      compression: true | key 'features.overrides[1].selector': selector "fx/#" is already used by features.overrides[0]
            features:\\n  overrides:\\n    - selector: "fx/#" | key 'features.overrides[0]' (selector "fx/#") sets no feature
            features:\\n  compressionMinBytes: -1 | features.compressionMinBytes
            """)
    void aBadFeaturesSectionIsRefusedNamingTheEntry(String yaml, String message) {
        assertThatThrownBy(() -> ConfigLoader.fromYaml(yaml.replace("\\n", "\n")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(message);
    }

    @Test
    void defaultsKeepTheCacheAndTurnTheRestOff() {
        assertThat(ServerConfig.defaults().features())
                .isEqualTo(new Features(true, false, false, Conflation.OFF, 256, 262144, List.of()));
    }
}
