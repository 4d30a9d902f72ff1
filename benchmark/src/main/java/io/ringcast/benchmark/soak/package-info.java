/**
 * The soak's analysis: {@code scripts/soak.sh} runs the real server jar under a steady load from the
 * load generator for a long time, samples the server's heap after GC (its GC log) and RSS, and
 * {@link io.ringcast.benchmark.soak.SoakReport} merges them with the generator's per-interval p99 and
 * deliveries/s into samples, a chart and a PASS/FAIL verdict on whether anything grew. How to run and
 * read it: {@code docs/operations.md}.
 */
package io.ringcast.benchmark.soak;
