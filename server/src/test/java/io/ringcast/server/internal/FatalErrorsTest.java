package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link FatalErrors}' decision: which throwables end a node. Its halt is {@code Runtime.halt},
 * reached only after {@link FatalErrors#install()}, which these tests never call (nothing in this
 * JVM may install it): so what is tested is the decision and that an embedded node only logs.
 */
class FatalErrorsTest {

    @Test
    void virtualMachineErrorsAreFatal() {
        assertThat(FatalErrors.isFatal(new OutOfMemoryError("Java heap space"))).isTrue();
        assertThat(FatalErrors.isFatal(new InternalError())).isTrue();
        assertThat(FatalErrors.isFatal(new UnknownError())).isTrue();
    }

    @Test
    void stackOverflowUnwindsOneCallChainAndIsNotFatal() {
        assertThat(FatalErrors.isFatal(new StackOverflowError())).isFalse();
    }

    @Test
    void exceptionsAndOtherErrorsAreNotFatal() {
        assertThat(FatalErrors.isFatal(new RuntimeException())).isFalse();
        assertThat(FatalErrors.isFatal(new IllegalStateException())).isFalse();
        assertThat(FatalErrors.isFatal(new AssertionError())).isFalse();
        assertThat(FatalErrors.isFatal(new LinkageError())).isFalse();
        assertThat(FatalErrors.isFatal(new Exception(new OutOfMemoryError()))).as("a cause is not the error")
                .isFalse();
    }

    @Test
    void embeddedNodeOnlyLogsAFatalError() {
        FatalErrors.haltIfFatal(new OutOfMemoryError("test"), "a test thread");
        FatalErrors.halt("a test thread", new InternalError("test"));
        // still running: the JVM was not halted
    }
}
