package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HeapGuardTest {
    /** The names are the JDK's: {@code GarbageCollectionNotificationInfo.getGcAction()} and {@code getGcName()}. */
    @Test
    void aSerialOrParallelYoungCollectionCannotStartRefusingButAFullOneAnyG1PauseAndAConcurrentCycleCan() {
        assertThat(HeapGuard.decisive("end of minor GC", "Copy")).isFalse();
        assertThat(HeapGuard.decisive("end of minor GC", "PS Scavenge")).isFalse();
        assertThat(HeapGuard.decisive("end of major GC", "MarkSweepCompact")).isTrue();
        assertThat(HeapGuard.decisive("end of major GC", "PS MarkSweep")).isTrue();
        assertThat(HeapGuard.decisive("end of minor GC", "G1 Young Generation")).isTrue();
        assertThat(HeapGuard.decisive("end of major GC", "G1 Old Generation")).isTrue();
        assertThat(HeapGuard.decisive("end of GC cycle", "ZGC Cycles")).isTrue();
        assertThat(HeapGuard.decisive("end of GC cycle", "Shenandoah Cycles")).isTrue();
    }

    @Test
    void aRefusalStartsOnlyOnADecisiveFigurePastTheMarkAndAnyFigureUnderItLiftsIt() {
        HeapGuard guard = new HeapGuard(100L << 20, 80, new ServerCounters());
        guard.collected(90L << 20, false, "young");
        assertThat(guard.refusing()).isFalse();
        guard.collected(81L << 20, true, "G1 Young Generation");
        assertThat(guard.refusing()).isTrue();
        guard.collected(85L << 20, false, "young");
        assertThat(guard.refusing()).as("still past").isTrue();
        guard.collected(79L << 20, false, "young");
        assertThat(guard.refusing()).isFalse();
        assertThat(HeapGuard.OFF.refusing()).isFalse();
    }
}
