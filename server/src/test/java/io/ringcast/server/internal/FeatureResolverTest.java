package io.ringcast.server.internal;

import io.ringcast.server.config.Conflation;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Precedence of overrides: the most specific selector wins, toggle by toggle. */
class FeatureResolverTest {
    private static final ServerConfig CONFIG = ConfigLoader.fromYaml("""
            features:
              deltas: false
              conflation: off
              overrides:
                - selector: "fx/EURUSD/audit"
                  conflation: off
                - selector: "fx/#"
                  deltas: true
                  conflation: on-backpressure
                - selector: "fx/+/bid"
                  conflation: always
                - selector: "+/EURUSD/bid"
                  compression: true
                - selector: "events/#"
                  lastValueCache: false
                  deltas: true
            """);
    private static final FeatureResolver RESOLVER = new FeatureResolver(CONFIG.features(),
            CONFIG.limits().pathLimits());

    private static TopicFeatures of(String path) {
        return RESOLVER.resolve(path.split("/"));
    }

    @Test
    void aTopicNoOverrideMatchesHasTheGlobalValues() {
        assertThat(of("eq/AAPL")).isEqualTo(new TopicFeatures(true, false, false, Conflation.OFF));
    }

    @Test
    void aSubtreeOverrideSetsOnlyTheTogglesItNames() {
        assertThat(of("fx/EURUSD/ask")).isEqualTo(new TopicFeatures(true, true, false, Conflation.ON_BACKPRESSURE));
    }

    @Test
    void theMoreSpecificSelectorWinsWhateverTheListOrder() {
        // fx/EURUSD/audit (3 literals) beats fx/# even though it comes first in the list
        assertThat(of("fx/EURUSD/audit").conflation()).isEqualTo(Conflation.OFF);
        assertThat(of("fx/EURUSD/audit").deltas()).as("still from fx/#").isTrue();
        // fx/+/bid (2 literals) beats fx/# (1)
        assertThat(of("fx/GBPUSD/bid").conflation()).isEqualTo(Conflation.ALWAYS);
    }

    @Test
    void togglesFromDifferentOverridesCombine() {
        assertThat(of("fx/EURUSD/bid")).isEqualTo(new TopicFeatures(true, true, true, Conflation.ALWAYS));
    }

    @Test
    void deltasNeedTheCache() {
        assertThat(of("events/login").lastValueCache()).isFalse();
        assertThat(of("events/login").deltas()).isFalse();
    }

    @Test
    void amongEquallySpecificSelectorsTheLaterInTheListWins() {
        ServerConfig config = ConfigLoader.fromYaml("""
                features:
                  overrides:
                    - selector: "fx/+"
                      conflation: always
                    - selector: "+/EURUSD"
                      conflation: on-backpressure
                """);
        FeatureResolver resolver = new FeatureResolver(config.features(), config.limits().pathLimits());

        assertThat(resolver.resolve(new String[]{"fx", "EURUSD"}).conflation()).isEqualTo(Conflation.ON_BACKPRESSURE);
    }

    @Test
    void plusIsMoreSpecificThanHashAtTheSameDepth() {
        ServerConfig config = ConfigLoader.fromYaml("""
                features:
                  overrides:
                    - selector: "fx/+"
                      deltas: true
                    - selector: "fx/#"
                      deltas: false
                """);
        FeatureResolver resolver = new FeatureResolver(config.features(), config.limits().pathLimits());

        assertThat(resolver.resolve(new String[]{"fx", "EURUSD"}).deltas()).isTrue();
    }

    @Test
    void amongEqualLiteralsTheDeeperSelectorWinsWhateverTheListOrder() {
        FeatureResolver resolver = resolver("""
                features:
                  overrides:
                    - selector: "fx/+/#"
                      conflation: always
                    - selector: "fx/#"
                      conflation: on-backpressure
                """);

        assertThat(resolver.resolve(new String[]{"fx", "EURUSD", "bid"}).conflation()).isEqualTo(Conflation.ALWAYS);
    }

    @Test
    void moreLiteralSegmentsOutrankMoreSegments() {
        FeatureResolver resolver = resolver("""
                features:
                  overrides:
                    - selector: "fx/#"
                      deltas: true
                    - selector: "+/+/+/+"
                      deltas: false
                """);

        assertThat(resolver.resolve(new String[]{"fx", "EURUSD", "bid", "l1"}).deltas()).isTrue();
        assertThat(resolver.resolve(new String[]{"eq", "AAPL", "bid", "l1"}).deltas()).as("only +/+/+/+ matches").isFalse();
    }

    @Test
    void aMoreSpecificOverrideThatTurnsTheCacheBackOnGetsTheDeltasBack() {
        FeatureResolver resolver = resolver("""
                features:
                  deltas: true
                  overrides:
                    - selector: "events/#"
                      lastValueCache: false
                    - selector: "events/audit"
                      lastValueCache: true
                """);

        assertThat(resolver.resolve(new String[]{"events", "login"})).isEqualTo(new TopicFeatures(false, false, false, Conflation.OFF));
        assertThat(resolver.resolve(new String[]{"events", "audit"})).isEqualTo(new TopicFeatures(true, true, false, Conflation.OFF));
    }

    private static FeatureResolver resolver(String yaml) {
        ServerConfig config = ConfigLoader.fromYaml(yaml);
        return new FeatureResolver(config.features(), config.limits().pathLimits());
    }
}
