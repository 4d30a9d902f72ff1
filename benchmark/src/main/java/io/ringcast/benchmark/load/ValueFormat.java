package io.ringcast.benchmark.load;

/**
 * What the load generator's values are ({@code --value-format}): the binary header of
 * {@link PayloadCodec} or the JSON object of {@link JsonPayload}. Either way each value carries the
 * run id, the topic index, the per-topic counter and the intended send time that the subscribers'
 * checks and latencies need, and is {@code --payload-bytes} long.
 */
enum ValueFormat {
    /** A 28-byte binary header, then padding ({@link PayloadCodec}): the cheapest to write and read. */
    BINARY,
    /**
     * A JSON object ({@link JsonPayload}): what subscription views ({@code fields}, {@code filter})
     * can read, so what {@code --view-shapes} needs, and its plain baseline too.
     */
    JSON
}
