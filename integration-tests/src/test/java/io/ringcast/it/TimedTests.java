package io.ringcast.it;

/**
 * The tag of the test classes that bound a time they measure (a witness's p99, a deadline, an
 * expiry between publishes): this module runs them after the others, in one test JVM with no other
 * beside it (integration-tests/pom.xml), since the others run two JVMs side by side and a fault
 * suite's five nodes on two cores are not a load these bounds were set for.
 */
final class TimedTests {
    static final String TAG = "timed";

    private TimedTests() {
    }
}
