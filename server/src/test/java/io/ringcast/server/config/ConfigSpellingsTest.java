package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigFixtures.assertRefused;
import static io.ringcast.server.config.ConfigFixtures.setting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.ringcast.protocol.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The spellings of {@link Conflation}, {@link FlushPolicy}, {@link WaitStrategyKind} and {@link Transport} in a config
 * file: each value's {@code yamlName()} reads back as that value, YAML's own readings of bare words
 * ({@code off} is false, {@code on} is true) mean what the operator wrote or are refused, and any
 * other spelling is refused listing the right ones.
 */
class ConfigSpellingsTest {

    @ParameterizedTest
    @EnumSource(Conflation.class)
    void everyConflationPolicyReadsBackFromItsYamlName(Conflation policy) {
        assertThat(ConfigLoader.fromYaml(setting("features.conflation", policy.yamlName())).features().conflation())
                .isEqualTo(policy);
        assertThat(ConfigLoader.fromYaml(setting("features.conflation", "\"" + policy.yamlName() + "\""))
                .features().conflation()).as("quoted").isEqualTo(policy);
    }

    @ParameterizedTest
    @EnumSource(FlushPolicy.class)
    void everyFlushPolicyReadsBackFromItsYamlName(FlushPolicy policy) {
        assertThat(ConfigLoader.fromYaml(setting("pipeline.flushPolicy", policy.yamlName())).pipeline().flushPolicy())
                .isEqualTo(policy);
    }

    @ParameterizedTest
    @EnumSource(WaitStrategyKind.class)
    void everyWaitStrategyReadsBackFromItsYamlName(WaitStrategyKind kind) {
        assertThat(ConfigLoader.fromYaml(setting("pipeline.waitStrategy", kind.yamlName())).pipeline().waitStrategy())
                .isEqualTo(kind);
    }

    /** Every transport is spelled as its configName; an available one reads back, an unavailable one is refused. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void everyTransportReadsBackFromItsConfigName(Transport transport) {
        String yaml = setting("server.transport", transport.configName());
        if (transport.isAvailable()) {
            assertThat(ConfigLoader.fromYaml(yaml).server().transport()).isEqualTo(transport);
        } else {
            assertRefused(yaml, "server.transport", Transport.unavailableMessage("key 'server.transport'", transport,
                    transport.unavailabilityCause()));
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            iouring   | "iouring"
            io-uring  | "io-uring"
            EPOLL     | "EPOLL"
            native    | "native"
            1         | 1
            '""'      | ""
            """)
    void otherTransportSpellingsAreRefusedListingTheRightOnes(String spelling, String shown) {
        assertRefused(setting("server.transport", spelling), "server.transport",
                "key 'server.transport' must be one of auto, nio, epoll, io_uring, got " + shown);
    }

    /**
     * The refusal of a transport this JVM cannot run, through the check {@code server.transport}'s
     * validation makes, with a made-up reason (the end-to-end one, through Netty's own switch
     * {@code -Dio.netty.transport.noNative=true}, is in the integration tests' ServerTransportProcessTest).
     */
    @Test
    void anUnavailableTransportIsRefusedNamingTheKeyAndTheNativeLibrarysReason() {
        Throwable cause = new UnsatisfiedLinkError("could not load a native library: netty_transport_native_epoll_x86_64");

        ConfigException e = catchThrowableOfType(ConfigException.class,
                () -> ConfigRules.availableTransport("server.transport", Transport.EPOLL, cause));

        assertThat(e).hasMessage("key 'server.transport' is epoll, which is not available in this JVM: "
                        + "java.lang.UnsatisfiedLinkError: could not load a native library: netty_transport_native_epoll_x86_64; "
                        + "auto takes the first available of "
                        + String.join(", ", Transport.autoOrder().stream().map(Transport::configName).toList()))
                .hasCause(cause);
        assertThat(e.key()).hasValue("server.transport");
        ConfigRules.availableTransport("server.transport", Transport.NIO, null); // available: nothing to refuse
    }

    /** YAML 1.1 reads bare {@code off} and {@code no} as false: for conflation that is what they say. */
    @ParameterizedTest
    @ValueSource(strings = {"off", "no", "false", "Off", "OFF"})
    void yamlsFalseSpellingsMeanConflationOff(String spelling) {
        assertThat(ConfigLoader.fromYaml(setting("features.conflation", spelling)).features().conflation())
                .isEqualTo(Conflation.OFF);
    }

    @Test
    void conflationOffUnquotedInAnOverrideIsThePolicyToo() {
        Features f = ConfigLoader.fromYaml("features:\n  conflation: always\n  overrides:\n"
                + "    - selector: \"audit/#\"\n      conflation: off\n").features();

        assertThat(f.overrides().get(0).conflation()).isEqualTo(Conflation.OFF);
    }

    /** Bare {@code on} is YAML's true: no policy is called that, so it is refused rather than guessed. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            on               | true
            yes              | true
            true             | true
            On-Backpressure  | "On-Backpressure"
            on_backpressure  | "on_backpressure"
            never            | "never"
            1                | 1
            '""'             | ""
            """)
    void otherConflationSpellingsAreRefusedListingTheRightOnes(String spelling, String shown) {
        assertRefused(setting("features.conflation", spelling), "features.conflation",
                "key 'features.conflation' must be one of off, on-backpressure, always, got " + shown);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            Immediate     | "Immediate"
            end_of_batch  | "end_of_batch"
            endOfBatch    | "endOfBatch"
            2             | 2
            '~'           | null
            """)
    void otherFlushPolicySpellingsAreRefusedListingTheRightOnes(String spelling, String shown) {
        assertRefused(setting("pipeline.flushPolicy", spelling), "pipeline.flushPolicy",
                "key 'pipeline.flushPolicy' must be one of immediate, end-of-batch, max-delay, adaptive, got " + shown);
    }

    @Test
    void conflationFromYamlRefusesAnythingButItsSpellingsAndFalse() {
        assertThat(Conflation.fromYaml(Boolean.FALSE)).isEqualTo(Conflation.OFF);
        assertThat(Conflation.fromYaml("on-backpressure")).isEqualTo(Conflation.ON_BACKPRESSURE);
        assertThatThrownBy(() -> Conflation.fromYaml(Boolean.TRUE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Conflation.fromYaml("ALWAYS")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Conflation.fromYaml(null)).isInstanceOf(IllegalArgumentException.class);
    }
}
