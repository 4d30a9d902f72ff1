package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigFixtures.assertRefused;
import static io.ringcast.server.config.ConfigFixtures.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * How each kind of Jackson binding failure is worded ({@link ConfigBinding}): the full key, list
 * indexes included, and what was expected against what was found. The top-level and section shapes
 * are in {@link ConfigLoaderTest}; these are the shapes inside lists and the records they hold.
 */
class ConfigBindingTest {

    @Test
    void anUnknownKeyInAListEntryListsTheKnownKeysOfThatEntry() {
        assertRefused("security:\n  roles: [{name: demo, subscribe: [], publish: [], grants: []}]\n",
                "security.roles[0].grants",
                "unknown key 'security.roles[0].grants' (known keys under 'security.roles[0]': name, subscribe, publish)");
    }

    @Test
    void anUnknownKeyInAListWhoseDefaultIsEmptyStillListsTheKnownKeys() {
        ConfigException e = refusal("cluster:\n  members: [{name: a, host: h, membershipPort: 1, port: 3}]\n");

        assertThat(e).hasMessageStartingWith("unknown key 'cluster.members[0].port' (known keys under 'cluster.members[0]': ");
        assertThat(e.getMessage()).contains("name", "host", "membershipPort");
        assertThat(e.key()).hasValue("cluster.members[0].port");
    }

    @Test
    void aMisspeltToggleInAnOverrideListsTheTogglesAnOverrideHas() {
        ConfigException e = refusal("features:\n  overrides:\n    - selector: \"fx/#\"\n      delta: true\n");

        assertThat(e).hasMessageStartingWith("unknown key 'features.overrides[0].delta' (known keys under "
                + "'features.overrides[0]': ");
        assertThat(e.getMessage()).contains("selector", "lastValueCache", "deltas", "compression", "conflation");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            security:\\n  allowedOrigins: "https://a.example"                   | security.allowedOrigins              | expects a list, got "https://a.example"
            security:\\n  allowedOrigins: [8080]                                | security.allowedOrigins[0]           | expects a string, got 8080
            security:\\n  roles: ~                                              | security.roles                       | expects a list, got null
            security:\\n  roles: [reader]                                       | security.roles[0]                    | expects a mapping of keys (name, subscribe, publish), got "reader"
            security:\\n  roles: [{name: r, subscribe: "a/#", publish: []}]     | security.roles[0].subscribe          | expects a list, got "a/#"
            security:\\n  roles: [{name: r, publish: []}]                       | security.roles[0].subscribe          | expects a list, got nothing
            security:\\n  principals: [{name: a, passwordHash: h}]              | security.principals[0].roles         | expects a list, got nothing
            features:\\n  overrides:\\n    - selector: 5\\n      deltas: true    | features.overrides[0].selector       | expects a string, got 5
            features:\\n  overrides:\\n    - selector: "a/#"\\n      deltas: ~   | features.overrides[0].deltas         | expects true or false, got null
            features:\\n  overrides: [5]                                        | features.overrides[0]                | expects a mapping of keys (selector, lastValueCache, deltas, compression, conflation, expireAfterMs), got 5
            cluster:\\n  members: [{name: a, host: h}]                       | cluster.members[0].membershipPort    | expects an integer, got nothing
            cluster:\\n  members: [{name: a, host: h, membershipPort: 99999999999}] | cluster.members[0].membershipPort | expects an integer that fits in 32 bits, got 99999999999
            cluster:\\n  members: [{name: a, host: 7, membershipPort: 1}] | cluster.members[0].host     | expects a string, got 7
            limits:\\n  outboundQueueBytes: 99999999999999999999                | limits.outboundQueueBytes            | expects an integer that fits in 64 bits, got 99999999999999999999
            server:\\n  port: -99999999999                                      | server.port                          | expects an integer that fits in 32 bits, got -99999999999
            demo:\\n  enabled: 1                                                | demo.enabled                         | expects true or false, got 1
            demo:\\n  enabled: "true"                                           | demo.enabled                         | expects true or false, got "true"
            state:\\n  file: [a, b]                                             | state.file                           | expects a string, got a list
            """)
    void aWrongTypeNamesTheFullKeyTheExpectedTypeAndTheValueFound(String yaml, String key, String expected) {
        assertRefused(yaml.replace("\\n", "\n"), key, "key '" + key + "' " + expected);
    }

    @Test
    void anEnumInAListEntryListsItsSpellings() {
        assertRefused("features:\n  overrides:\n    - selector: \"a/#\"\n      conflation: sometimes\n",
                "features.overrides[0].conflation",
                "key 'features.overrides[0].conflation' must be one of off, on-backpressure, always, got \"sometimes\"");
    }

    /** A list entry left empty ({@code - } or {@code ~}) is named by its index, as a key left empty is. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            security:\\n  anonymousRoles: [demo, ~]                       | security.anonymousRoles[1]     | expects a string, got null
            security:\\n  allowedOrigins:\\n    -\\n                       | security.allowedOrigins[0]     | expects a string, got null
            security:\\n  roles: [~]                                      | security.roles[0]              | expects a mapping of keys (name, subscribe, publish), got null
            security:\\n  roles: [{name: r, subscribe: [~], publish: []}] | security.roles[0].subscribe[0] | expects a string, got null
            cluster:\\n  members: [~]                                     | cluster.members[0]             | expects a mapping of keys (name, host, membershipPort), got null
            features:\\n  overrides: [~]                                  | features.overrides[0]          | expects a mapping of keys (selector, lastValueCache, deltas, compression, conflation, expireAfterMs), got null
            """)
    void anEmptyListEntryNamesTheEntry(String yaml, String key, String expected) {
        assertRefused(yaml.replace("\\n", "\n"), key, "key '" + key + "' " + expected);
    }
}
