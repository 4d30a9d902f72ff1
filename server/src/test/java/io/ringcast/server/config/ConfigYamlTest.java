package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigFixtures.assertRefused;
import static io.ringcast.server.config.ConfigFixtures.refusal;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * How strictly a config file is read as YAML ({@link ConfigYaml}): one document, no key twice, no
 * YAML feature that would make a value mean something other than what is written, and syntax errors
 * that say where.
 */
class ConfigYamlTest {

    @Test
    void aSectionWrittenTwiceIsRefusedRatherThanTheSecondReplacingTheFirst() {
        assertRefused("server:\n  port: 9090\nlimits:\n  maxTopics: 5\nserver:\n  host: \"::\"\n", "server",
                "duplicate key 'server' at line 5, column 7");
    }

    @Test
    void aKeyWrittenTwiceInsideAListEntryIsNamedWithItsIndex() {
        assertRefused("security:\n  anonymousRoles: []\n  roles:\n    - name: a\n      subscribe: []\n"
                        + "      publish: []\n      publish: [\"#\"]\n",
                "security.roles[0].publish", "duplicate key 'security.roles[0].publish' at line 7, column 14");
    }

    @Test
    void aKeyWrittenTwiceInAFlowMappingIsRefused() {
        assertThat(refusal("server: {port: 1, port: 2}\n").key()).hasValue("server.port");
    }

    @Test
    void anEmptySecondDocumentIsStillASecondDocument() {
        assertThat(refusal("server:\n  port: 1\n---\n"))
                .hasMessageStartingWith("holds more than one YAML document")
                .hasMessageEndingWith("; put every section in one document");
    }

    @Test
    void anExplicitDocumentStartAndEndAroundOneDocumentAreAccepted() {
        assertThat(ConfigLoader.fromYaml("---\nserver:\n  port: 9090\n...\n").server().port()).isEqualTo(9090);
    }

    @Test
    void aYamlMergeKeyIsAnUnknownKeyNotAMerge() {
        assertRefused("server:\n  <<: {port: 9090}\n", "server.<<",
                "unknown key 'server.<<' (known keys under 'server': host, port, ioThreads, transport)");
    }

    @Test
    void anExplicitStringTagDoesNotMakeANumberOfIt() {
        assertRefused("server:\n  port: !!str 9090\n", "server.port", "key 'server.port' expects an integer, got \"9090\"");
    }

    @Test
    void aDateIsNotAPortButIsAHostNameAsWritten() {
        assertThat(refusal("server:\n  port: 2019-01-01\n").key()).hasValue("server.port");
        assertThat(ConfigLoader.fromYaml("server:\n  host: 2019-01-01\n").server().host()).isEqualTo("2019-01-01");
    }

    @Test
    void anUnclosedQuoteIsASyntaxErrorNamingWhereTheQuoteOpened() {
        assertThat(refusal("server:\n  host: \"abc\n  port: 1\n"))
                .hasMessageStartingWith("YAML syntax error at line ")
                .hasMessageEndingWith("(while scanning a quoted scalar at line 2, column 9)");
    }

    @Test
    void anUnclosedFlowListIsASyntaxErrorNamingWhereItOpened() {
        assertThat(refusal("security:\n  allowedOrigins: [\"https://a.example\"\n"))
                .hasMessageStartingWith("YAML syntax error at line 3, column 1: expected ',' or ']'")
                .hasMessageEndingWith("(while parsing a flow sequence at line 2, column 19)");
    }

    @Test
    void aListOrAScalarAtTheTopIsRefusedNamingTheSections() {
        String sections = "server, limits, history, pipeline, session, features, state, security, demo, cluster";
        assertThat(refusal("- server\n- limits\n"))
                .hasMessage("the top level must be a mapping of sections (" + sections + "), got a list");
        assertThat(refusal("42\n")).hasMessage("the top level must be a mapping of sections (" + sections + "), got 42");
    }

    @Test
    void anAnchorAloneIsHarmlessAndReadAsItsValue() {
        assertThat(ConfigLoader.fromYaml("server:\n  host: &h \"127.0.0.1\"\n").server().host()).isEqualTo("127.0.0.1");
    }

    /**
     * Jackson reads an alias as the anchor's name, so {@code file: *h} would quietly be the file
     * {@code "h"}: refused instead, naming the key.
     */
    @Test
    void anAliasIsRefusedNamingTheKeyRatherThanReadAsTheAnchorsName() {
        assertRefused("server:\n  host: &h \"10.0.0.1\"\nstate:\n  file: *h\n", "state.file",
                "key 'state.file' is an alias (*h) at line 4, column 9; aliases are not supported, write the value out");
    }

    @Test
    void anAliasInAListIsRefusedNamingTheEntry() {
        assertThat(refusal("security:\n  anonymousRoles: &r [demo]\n  principals:\n"
                + "    - {name: a, passwordHash: x, roles: [demo, *r]}\n").key())
                .hasValue("security.principals[0].roles[1]");
    }
}
