package io.ringcast.benchmark.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.SubscribeOptions;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The JSON values of --value-format json: written as JSON, read back in place, from a projection too. */
class JsonPayloadTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @EnumSource(Padding.class)
    void aValueIsAJsonObjectOfThePayloadSizeWithTheHeaderFieldsFirst(Padding padding) throws Exception {
        byte[] v = JsonPayload.encode(200, padding, 10, 42, 3, 999, 123_456_789_012L, -5L);
        assertThat(v).hasSize(200);
        JsonNode node = JSON.readTree(v); // any padding makes valid JSON: no quote, backslash or control byte left
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("r", "p", "t", "c", "s", "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8",
                "f9", "x");
        assertThat(node.get("r").asInt()).isEqualTo(42);
        assertThat(node.get("p").asInt()).isEqualTo(3);
        assertThat(node.get("t").asInt()).isEqualTo(999);
        assertThat(node.get("c").asLong()).isEqualTo(123_456_789_012L);
        assertThat(node.get("s").asLong()).isEqualTo(-5L);
        for (int f = 0; f < 10; f++) {
            assertThat(node.get("f" + f).asInt()).isEqualTo(JsonPayload.fieldValue(f, 999, 123_456_789_012L))
                    .isBetween(JsonPayload.FIELD_MIN, 9999);
        }
        assertThat(new String(v, StandardCharsets.US_ASCII)).doesNotContain(" ");
    }

    @Test
    void theSmallestSizeHoldsEveryNumberAtItsWidestAndNoLess() throws Exception {
        int min = JsonPayload.minBytes(10);
        byte[] widest = JsonPayload.encode(min, Padding.ZEROS, 10, Integer.MAX_VALUE, 999, 999_999, Long.MAX_VALUE,
                Long.MIN_VALUE);
        assertThat(JSON.readTree(widest).get("x").asText()).isEmpty();
        assertThat(min).as("the default 200 B hold 10 fields").isLessThanOrEqualTo(200);
        assertThatThrownBy(() -> JsonPayload.encode(min - 1, Padding.ZEROS, 10, Integer.MAX_VALUE, 999, 999_999,
                Long.MAX_VALUE, Long.MIN_VALUE)).hasMessageContaining("at least " + min);
        assertThat(JsonPayload.minBytes(11)).isEqualTo(min + ",\"f10\":1000".length());
    }

    @Test
    void fieldsMoveWithTheCounter() {
        assertThat(JsonPayload.fieldValue(3, 7, 1)).isNotEqualTo(JsonPayload.fieldValue(3, 7, 2));
        assertThat(JsonPayload.fieldValue(3, 7, 1)).isNotEqualTo(JsonPayload.fieldValue(4, 7, 1));
    }

    @Test
    void theHeaderIsReadBackInPlaceFromAValue() {
        byte[] v = JsonPayload.encode(200, Padding.TEXT, 10, 42, 3, 999, 123_456_789_012L, -5L);
        ByteBuf frame = Unpooled.buffer().writeZero(11).writeBytes(v).writeZero(7);
        ValueHeader h = new ValueHeader(ValueFormat.JSON);
        assertThat(h.read(frame, 11, v.length)).isTrue();
        assertThat(h.runId).isEqualTo(42);
        assertThat(h.topicIndex).isEqualTo(999);
        assertThat(h.counter).isEqualTo(123_456_789_012L);
        assertThat(h.intendedSendNs).isEqualTo(-5L);
        assertThat(frame.readerIndex()).as("read in place").isZero();

        ValueHeader fromCopy = new ValueHeader(ValueFormat.JSON);
        assertThat(fromCopy.read(v)).isTrue();
        assertThat(fromCopy.counter).isEqualTo(123_456_789_012L);
    }

    /** What the server's projection of shape 2 writes: the named fields in the value's order, no spaces. */
    @Test
    void theHeaderIsReadBackFromAProjection() {
        ValueHeader h = new ValueHeader(ValueFormat.JSON);
        assertThat(read(h, "{\"r\":7,\"t\":3,\"c\":12,\"s\":-9223372036854775808,\"f2\":1234}")).isTrue();
        assertThat(h.runId).isEqualTo(7);
        assertThat(h.topicIndex).isEqualTo(3);
        assertThat(h.counter).isEqualTo(12);
        assertThat(h.intendedSendNs).isEqualTo(Long.MIN_VALUE);
        // any order, other keys and strings between them
        assertThat(read(h, "{\"x\":\"a\\\"b\",\"s\":5,\"f0\":1000,\"c\":6,\"ok\":true,\"t\":0,\"r\":1}")).isTrue();
        assertThat(h.intendedSendNs).isEqualTo(5);
        assertThat(h.counter).isEqualTo(6);
        assertThat(h.runId).isEqualTo(1);
    }

    @Test
    void whatIsNotSuchAnObjectIsNotRead() {
        ValueHeader h = new ValueHeader(ValueFormat.JSON);
        for (String notOurs : new String[] {"", "{}", "[1]", "not json", "{\"r\":1,\"t\":2,\"c\":3}",
                "{\"r\":1,\"t\":2,\"c\":3,\"s\":\"4\"}", "{\"r\":1,\"t\":2,\"c\":3.5,\"s\":4}",
                "{\"r\":1,\"t\":2,\"c\":3,\"s\":", "{\"r\":1,\"q\":{\"t\":2},\"c\":3,\"s\":4}",
                "{\"r\":1, \"t\":2,\"c\":3,\"s\":4}", "{\"r\":2147483648,\"t\":2,\"c\":3,\"s\":4}",
                "{\"r\":1,\"t\":2,\"c\":99999999999999999999,\"s\":4}", "{\"r\":1,\"t\":2,\"c\":-,\"s\":4}"}) {
            assertThat(read(h, notOurs)).as(notOurs).isFalse();
        }
        // cut short after the four is read: the rest is not looked at, as the server's filter does not
        assertThat(read(h, "{\"r\":1,\"t\":2,\"c\":3,\"s\":4")).isTrue();
        // a binary value (an earlier run's snapshot) is not JSON
        assertThat(h.read(PayloadCodec.encode(200, Padding.ZEROS, 42, 3, 999, 1, 2))).isFalse();
    }

    @Test
    void readingAllocatesNothing() {
        ByteBuf frame = Unpooled.wrappedBuffer(JsonPayload.encode(200, Padding.ZEROS, 10, 42, 3, 999, 12, -5L));
        ValueHeader h = new ValueHeader(ValueFormat.JSON);
        long sum = 0;
        for (int i = 0; i < 100_000; i++) {
            h.read(frame, 0, frame.readableBytes()); // warm up
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            h.read(frame, 0, frame.readableBytes());
            sum += h.counter;
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(sum).isEqualTo(12L * 100_000);
        assertThat(allocated).as("bytes allocated for 100,000 reads").isLessThan(10_000);
    }

    @Test
    void eachShapeProjectsTheHeaderAndAFieldOfItsOwnAndFiltersOnWhatEveryValuePasses() {
        Set<SubscribeOptions> shapes = new HashSet<>();
        for (int i = 0; i < 10; i++) {
            SubscribeOptions o = JsonPayload.viewShape(i);
            assertThat(o.fields()).containsExactly("r", "t", "c", "s", "f" + i);
            assertThat(o.filter()).isEqualTo("c > 0 and f" + i + " >= 1000");
            assertThat(o.makesView()).isTrue();
            assertThat(o.maxRateThousandths()).isZero();
            shapes.add(o);
        }
        assertThat(shapes).as("distinct views").hasSize(10);
    }

    static boolean read(ValueHeader h, String json) {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        return h.read(Unpooled.wrappedBuffer(bytes), 0, bytes.length);
    }
}
