/**
 * The end-to-end load generator: {@code java -jar benchmark/target/ringcast-bench.jar --help}.
 *
 * <p>{@link io.ringcast.benchmark.load.LoadGenerator} is the command. One run ({@link
 * io.ringcast.benchmark.load.LoadRun}) connects subscribers (lean WebSocket connections, {@link
 * io.ringcast.benchmark.load.LeanSubscriber}, or Java clients) and Java-client publishers on one
 * shared Netty group, paces publishes at their intended times ({@link
 * io.ringcast.benchmark.load.PacedPublisher}), checks every delivery per subscriber and topic
 * ({@link io.ringcast.benchmark.load.SubscriberTally}) and records latency from the intended send time. {@link io.ringcast.benchmark.load.RateSweep}
 * raises the rate step by step to find the max clean rate. With {@code --target jetstream} the same
 * run loads NATS JetStream through the official NATS Java client instead ({@link
 * io.ringcast.benchmark.load.JetStreamClients}): {@code scripts/bench-cluster.sh --vs-jetstream}; with
 * {@code --target redis}, Redis pub/sub through Netty's RESP codec on the same group ({@link
 * io.ringcast.benchmark.load.RedisClients}): {@code scripts/bench-e2e.sh --vs-redis}.
 * Results are written as JSON, {@code .hgrm} and PNG ({@link io.ringcast.benchmark.load.ResultFiles}). How to read them:
 * {@code docs/benchmarks.md}.
 */
package io.ringcast.benchmark.load;
