package io.ringcast.benchmark.jmh;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Deliveries counted by the fan-out under test during the measured operations, reported by JMH as
 * the secondary result {@code deliveries} next to the time. It is what the smoke test checks
 * (every update reached every subscriber) and the divisor {@link DeliveryReport} checks against
 * {@code updates x subscribers}.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Deliveries {
    /** Deliveries completed by the operations of the current iteration. */
    public long deliveries;

    @Setup(Level.Iteration)
    public void reset() {
        deliveries = 0;
    }
}
