package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

/** What a run reports about a cluster losing its leader: the longest pause, and failed publishes by reason. No sockets. */
class PausesAndFailuresTest {
    @Test
    void aFailedPublishIsCountedByTheServersCodeElseTheClientsMessage() {
        assertThat(PacedPublisher.reason(new RingcastException("no", ErrorCode.NO_MAJORITY, 0))).isEqualTo("NO_MAJORITY");
        assertThat(PacedPublisher.reason(new RingcastException("client closed"))).isEqualTo("client closed");
    }

    @Test
    void theLongestGapCountsOnlyGapsEndingInTheWindowAndAnOpenOneUpToTheEnd() {
        MeasurementWindow window = new MeasurementWindow();
        window.open(1_000, 10_000);
        LongestGap gap = new LongestGap();
        gap.record(100, window);
        gap.record(900, window);   // 800, ended before the window: warm-up
        gap.record(1_100, window); // 200
        gap.record(1_400, window); // 300
        assertThat(gap.longestNs()).isEqualTo(300);
        assertThat(gap.longestEndNs()).isEqualTo(1_400);
        gap.closeOpenGap(2_000, window); // nothing after 1,400 until the end
        assertThat(gap.longestNs()).isEqualTo(600);
        gap.record(2_100, window); // the open gap was closed for the report only: this is 700 after 1,400
        assertThat(gap.longestNs()).isEqualTo(700);
    }
}
