package io.ringcast.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The line {@code remove} prints once the server answered, without sockets; MainTest covers its
 * command line up to the connect, CliProcessTest runs it against a node.
 */
class RemoveCommandTest {
    @Test
    void theLineSaysHowManyTopicsWereRemovedAndWhichSelector() {
        assertThat(RemoveCommand.resultLine(3, "fx/#")).isEqualTo("removed 3 topics matching 'fx/#'");
        assertThat(RemoveCommand.resultLine(0, "nothing/+")).isEqualTo("removed 0 topics matching 'nothing/+'");
    }

    @Test
    void oneTopicIsSingular() {
        assertThat(RemoveCommand.resultLine(1, "fx/EURUSD")).isEqualTo("removed 1 topic matching 'fx/EURUSD'");
    }
}
