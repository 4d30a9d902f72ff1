package io.ringcast.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** Writing config snippets and asserting how the loader refuses them, for the config tests. */
final class ConfigFixtures {

    private ConfigFixtures() {
    }

    /** {@code section.name} and a YAML scalar as a one-key document. */
    static String setting(String key, String value) {
        int dot = key.indexOf('.');
        return key.substring(0, dot) + ":\n  " + key.substring(dot + 1) + ": " + value + "\n";
    }

    /** The exception {@link ConfigLoader#fromYaml} refuses {@code yaml} with; fails if it accepts it. */
    static ConfigException refusal(String yaml) {
        Throwable thrown = catchThrowable(() -> ConfigLoader.fromYaml(yaml));
        assertThat(thrown).as("what loading this gives:\n%s", yaml).isInstanceOf(ConfigException.class);
        return (ConfigException) thrown;
    }

    /** {@code yaml} is refused with exactly {@code message}, naming {@code key} as the key at fault. */
    static void assertRefused(String yaml, String key, String message) {
        ConfigException e = refusal(yaml);
        assertThat(e).hasMessage(message);
        assertThat(e.key()).as("the key at fault").hasValue(key);
    }
}
