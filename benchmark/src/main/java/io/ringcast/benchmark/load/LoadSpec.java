package io.ringcast.benchmark.load;

import io.ringcast.protocol.SubscribeOptions;
import java.util.List;
import java.util.Objects;

/**
 * What one load run does: validated once, immutable. Each error names the command-line flag.
 *
 * @param servers       WebSocket URLs; client i starts at {@code servers[i % n]} and falls back to the others
 * @param embedded      whether the server is the in-process one ({@code --embedded})
 * @param topics        topics {@code bench/t0000 ..}, each owned by one publisher
 * @param payloadBytes  size of every value, the 28-byte header included
 * @param rate          offered publishes per second, over all publishers together
 * @param publishers    publisher connections, one pacing thread each
 * @param subscribers   subscriber connections
 * @param selector      every subscriber's selector
 * @param durationMs    measured time
 * @param warmupMs      time before it, at the same rate: checked for correctness, not measured
 * @param ioThreads     event loops of the Netty group all clients share
 * @param transport     the Netty transport of that group, as its configName ({@code nio}, {@code epoll},
 *                      {@code io_uring}: resolved, never {@code auto})
 * @param padding       what fills each value after its header
 * @param serverPids    the servers' process ids, whose CPU time is measured over the run; empty for none
 * @param subscriberClient how the subscribers connect: lean connections or the Java client
 * @param valueFormat   what the values are: the binary header or a JSON object ({@link JsonPayload})
 * @param jsonFields    the {@code f} fields of a JSON value
 * @param viewShapes    0: plain subscriptions; else subscriber {@code i} subscribes with view shape
 *                      {@code i mod viewShapes} ({@link JsonPayload#viewShape}), JSON values only
 * @param target        the system loaded: Ringcast ({@code ws://} URLs), NATS JetStream ({@code nats://}
 *                      URLs) or Redis pub/sub ({@code redis://} URLs); for the last two every subscriber is
 *                      on every topic and {@code subscriberClient} is not used
 */
record LoadSpec(List<String> servers, boolean embedded, int topics, int payloadBytes, int rate, int publishers,
                int subscribers, String selector, long durationMs, long warmupMs, int ioThreads, String transport,
                Padding padding, List<Long> serverPids, SubscriberClient subscriberClient, ValueFormat valueFormat,
                int jsonFields, int viewShapes, Target target) {

    /** The {@code f} fields of a JSON value unless {@code --json-fields} says otherwise: enough for ten view shapes. */
    static final int DEFAULT_JSON_FIELDS = 10;

    /** Topic paths are {@code bench/t} and a zero-padded index. */
    static final String TOPIC_PREFIX = "bench/t";

    LoadSpec {
        servers = List.copyOf(Objects.requireNonNull(servers, "--servers"));
        Objects.requireNonNull(selector, "--selector");
        Objects.requireNonNull(transport, "--transport");
        Objects.requireNonNull(padding, "--padding");
        serverPids = List.copyOf(Objects.requireNonNull(serverPids, "--server-pids"));
        Objects.requireNonNull(subscriberClient, "--subscriber-client");
        Objects.requireNonNull(valueFormat, "--value-format");
        Objects.requireNonNull(target, "--target");
        require(!servers.isEmpty(), "--servers: at least one URL is required (ws://, or nats:// with --target jetstream,"
                + " redis:// with --target redis)");
        require(topics >= 1 && topics <= 1_000_000, "--topics: must be 1..1000000, was " + topics);
        require(payloadBytes >= PayloadCodec.HEADER_BYTES && payloadBytes <= 1 << 20,
                "--payload-bytes: must be " + PayloadCodec.HEADER_BYTES + ".." + (1 << 20) + " (the header takes "
                        + PayloadCodec.HEADER_BYTES + "), was " + payloadBytes);
        require(jsonFields >= 1 && jsonFields <= JsonPayload.MAX_FIELDS, "--json-fields: must be 1.."
                + JsonPayload.MAX_FIELDS + ", was " + jsonFields);
        require(valueFormat != ValueFormat.JSON || payloadBytes >= JsonPayload.minBytes(jsonFields),
                "--payload-bytes: JSON values with " + jsonFields + " fields take up to " + JsonPayload.minBytes(jsonFields)
                        + " bytes before their padding, so at least that (or fewer --json-fields), was " + payloadBytes);
        require(viewShapes >= 0, "--view-shapes: must not be negative, was " + viewShapes);
        require(viewShapes == 0 || valueFormat == ValueFormat.JSON,
                "--view-shapes: views read fields of JSON values; add --value-format json");
        require(viewShapes <= jsonFields, "--view-shapes: each shape projects a field of its own, so at most"
                + " --json-fields (" + jsonFields + "), was " + viewShapes);
        require(rate >= 1 && rate <= 10_000_000, "--rate: must be 1..10000000 per second, was " + rate);
        require(publishers >= 1 && publishers <= 1_000, "--publishers: must be 1..1000, was " + publishers);
        require(publishers <= topics, "--publishers: each publisher owns at least one topic, so at most --topics ("
                + topics + "), was " + publishers);
        require(subscribers >= 0 && subscribers <= 100_000, "--subscribers: must be 0..100000, was " + subscribers);
        require(durationMs >= 100, "--duration: must be at least 100ms, was " + durationMs + "ms");
        require(warmupMs >= 0, "--warmup: must not be negative, was " + warmupMs + "ms");
        require(ioThreads >= 1 && ioThreads <= 256, "--io-threads: must be 1..256, was " + ioThreads);
        require(serverPids.stream().allMatch(pid -> pid > 0), "--server-pids: process ids are positive, were "
                + serverPids);
        if (target != Target.RINGCAST) {
            String option = "--target " + target.optionName();
            require(servers.stream().allMatch(u -> u.startsWith(target.urlScheme)),
                    option + ": --servers are " + target.urlScheme + " URLs, was " + servers);
            require(!embedded, "--embedded: the in-process server is Ringcast's; " + option + " needs --servers");
            require(selector.equals("#"), option + ": every subscriber takes every topic, so --selector '#',"
                    + " was '" + selector + "'");
            require(viewShapes == 0, "--view-shapes: views are Ringcast's; " + option + " has none");
        } else {
            require(subscriberClient != SubscriberClient.LEAN || servers.stream().allMatch(u -> u.startsWith("ws://")),
                    "--subscriber-client lean: lean subscribers speak ws:// only, was " + servers
                            + " (use --subscriber-client java for wss://)");
        }
    }

    /** A run against Ringcast: the spec before JetStream could be a target. */
    LoadSpec(List<String> servers, boolean embedded, int topics, int payloadBytes, int rate, int publishers,
             int subscribers, String selector, long durationMs, long warmupMs, int ioThreads, String transport,
             Padding padding, List<Long> serverPids, SubscriberClient subscriberClient, ValueFormat valueFormat,
             int jsonFields, int viewShapes) {
        this(servers, embedded, topics, payloadBytes, rate, publishers, subscribers, selector, durationMs, warmupMs,
                ioThreads, transport, padding, serverPids, subscriberClient, valueFormat, jsonFields, viewShapes,
                Target.RINGCAST);
    }

    /** A run of binary values and plain subscriptions: the spec before values could be JSON. */
    LoadSpec(List<String> servers, boolean embedded, int topics, int payloadBytes, int rate, int publishers,
             int subscribers, String selector, long durationMs, long warmupMs, int ioThreads, String transport,
             Padding padding, List<Long> serverPids, SubscriberClient subscriberClient) {
        this(servers, embedded, topics, payloadBytes, rate, publishers, subscribers, selector, durationMs, warmupMs,
                ioThreads, transport, padding, serverPids, subscriberClient, ValueFormat.BINARY, DEFAULT_JSON_FIELDS, 0);
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** The same run at another rate (the sweep's steps). */
    LoadSpec withRate(int newRate) {
        return new LoadSpec(servers, embedded, topics, payloadBytes, newRate, publishers, subscribers, selector,
                durationMs, warmupMs, ioThreads, transport, padding, serverPids, subscriberClient, valueFormat,
                jsonFields, viewShapes, target);
    }

    /**
     * The options subscriber {@code i} subscribes with: {@link SubscribeOptions#NONE} for a plain run,
     * else view shape {@code i mod viewShapes}, so the subscribers are spread round robin over them.
     */
    SubscribeOptions subscribeOptions(int i) {
        return viewShapes == 0 ? SubscribeOptions.NONE : JsonPayload.viewShape(i % viewShapes);
    }

    /** A new value of this run's format and size (the publishers' encoding). */
    byte[] encodeValue(int runId, int publisherId, int topicIndex, long counter, long intendedSendNs) {
        return valueFormat == ValueFormat.JSON
                ? JsonPayload.encode(payloadBytes, padding, jsonFields, runId, publisherId, topicIndex, counter,
                        intendedSendNs)
                : PayloadCodec.encode(payloadBytes, padding, runId, publisherId, topicIndex, counter, intendedSendNs);
    }

    /** The path of topic {@code index}: {@code bench/t0042} (at least four digits, as many as the largest needs). */
    String topicPath(int index) {
        int width = Math.max(4, Integer.toString(topics - 1).length());
        String digits = Integer.toString(index);
        return TOPIC_PREFIX + "0".repeat(width - digits.length()) + digits;
    }

    /**
     * Every topic's name with dots for slashes, by topic index: {@code bench/t0042} is {@code bench.t0042},
     * JetStream's subject and Redis's channel of the topic.
     */
    String[] dottedTopicNames() {
        String[] names = new String[topics];
        for (int t = 0; t < names.length; t++) {
            names[t] = topicPath(t).replace('/', '.');
        }
        return names;
    }

    /**
     * The index of the topic at {@code path}, the inverse of {@link #topicPath}; -1 when {@code path}
     * is not one of this spec's topics (another width, another prefix, an index out of range).
     */
    int topicIndex(String path) {
        if (!path.startsWith(TOPIC_PREFIX) || path.length() == TOPIC_PREFIX.length()) {
            return -1;
        }
        int index = 0;
        for (int i = TOPIC_PREFIX.length(); i < path.length(); i++) {
            char c = path.charAt(i);
            if (c < '0' || c > '9' || index >= topics) {
                return -1;
            }
            index = index * 10 + (c - '0');
        }
        // the round trip rejects what topicPath never writes: another zero padding, an index past the last
        return index < topics && topicPath(index).equals(path) ? index : -1;
    }

    /** The addresses for client {@code i}: its own server first, the others as fallbacks. */
    String[] addressesFor(int i) {
        int n = servers.size();
        String[] rotated = new String[n];
        for (int k = 0; k < n; k++) {
            rotated[k] = servers.get((i + k) % n);
        }
        return rotated;
    }

    /**
     * The scenario named by its topology, e.g. {@code 1n-4p-100s-1000t-200B}; JSON values add
     * {@code -json}, views their number of shapes: {@code 1n-1p-1000s-1000t-200B-json-10v}, and another
     * target than Ringcast its name: {@code -jetstream}, {@code -redis}.
     */
    String topology() {
        return servers.size() + "n-" + publishers + "p-" + subscribers + "s-" + topics + "t-" + payloadBytes + "B"
                + (valueFormat == ValueFormat.JSON ? "-json" : "") + (viewShapes > 0 ? "-" + viewShapes + "v" : "")
                + (target == Target.RINGCAST ? "" : "-" + target.optionName());
    }

    /** {@link #topology()} and the rate, e.g. {@code 1n-4p-100s-1000t-200B-10000ps}: the run's file names. */
    String scenario() {
        return topology() + "-" + rate + "ps";
    }
}
