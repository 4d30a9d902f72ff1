package io.ringcast.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lines {@code sub} prints (updates and removals) and the value encodings {@code sub} and
 * {@code pub} share, without sockets.
 */
class UpdateLinesTest {
    private static final byte[] NOT_UTF8 = {0x00, (byte) 0xff, (byte) 0xc3, 0x28, 0x0a};

    record TestUpdate(String topic, long sequence, byte[] value, UpdateKind kind) implements Update {
    }

    private static String lines(UpdateFormat format, ValueEncoding values, Update... updates) throws IOException {
        StringWriter out = new StringWriter();
        try (UpdateLines lines = new UpdateLines(out, format, values)) {
            for (Update u : updates) {
                lines.write(u);
            }
        }
        return out.toString();
    }

    private static Update update(String topic, long sequence, String text) {
        return new TestUpdate(topic, sequence, text.getBytes(StandardCharsets.UTF_8), UpdateKind.UPDATE);
    }

    @Test
    void textIsTopicSequenceAndValueOneLineEach() throws IOException {
        assertThat(lines(UpdateFormat.TEXT, ValueEncoding.UTF8, update("fx/EURUSD", 7, "1.0842 bid"),
                update("fx/GBPUSD", 12, "")))
                .isEqualTo("fx/EURUSD 7 1.0842 bid\nfx/GBPUSD 12 \n");
    }

    @Test
    void textEscapesWhatWouldBreakTheLineAndTheBackslashItself() throws IOException {
        assertThat(lines(UpdateFormat.TEXT, ValueEncoding.UTF8, update("t", 1, "a\nb\r\tc\\d\u0007é€")))
                .isEqualTo("t 1 a\\nb\\r\\tc\\\\d\\u0007é€\n");
    }

    @Test
    void jsonIsOneObjectALineWithTheKind() throws IOException {
        String out = lines(UpdateFormat.JSON, ValueEncoding.UTF8, update("fx/EURUSD", 7, "say \"hi\"\n"),
                new TestUpdate("fx/GBPUSD", 3, new byte[0], UpdateKind.GAP_WITHOUT_VALUE));

        assertThat(out).isEqualTo("{\"topic\":\"fx/EURUSD\",\"sequence\":7,\"kind\":\"UPDATE\",\"value\":\"say \\\"hi\\\"\\n\"}\n"
                + "{\"topic\":\"fx/GBPUSD\",\"sequence\":3,\"kind\":\"GAP_WITHOUT_VALUE\",\"value\":\"\"}\n");
        ObjectMapper mapper = new ObjectMapper();
        for (String line : out.split("\n")) {
            assertThat(mapper.readTree(line).isObject()).isTrue();
        }
    }

    @Test
    void aRemovalInTextIsTheTopicThenRemovedAfterItsLastSequence() throws IOException {
        StringWriter out = new StringWriter();
        try (UpdateLines lines = new UpdateLines(out, UpdateFormat.TEXT, ValueEncoding.UTF8)) {
            lines.write(update("fx/EURUSD", 3, "1.0842"));
            lines.writeRemoved("fx/EURUSD", 3);
            lines.write(update("fx/EURUSD", 1, "again"));
        }

        assertThat(out.toString()).isEqualTo("fx/EURUSD 3 1.0842\nfx/EURUSD removed after 3\nfx/EURUSD 1 again\n");
        assertThat(out.toString().split("\n")[1].split(" ")[1]).as("the second word: never a sequence")
                .doesNotContainPattern("[0-9]");
    }

    @ParameterizedTest
    @EnumSource(ValueEncoding.class)
    void aRemovalInJsonIsAnObjectOfKindRemovedWithTheLastSequenceAndNoValue(ValueEncoding encoding) throws IOException {
        StringWriter out = new StringWriter();
        try (UpdateLines lines = new UpdateLines(out, UpdateFormat.JSON, encoding)) {
            lines.writeRemoved("fx/\"quoted\"", 42);
            lines.write(new TestUpdate("fx/b", 1, new byte[0], UpdateKind.UPDATE));
        }

        String[] written = out.toString().split("\n");
        assertThat(written[0]).isEqualTo("{\"topic\":\"fx/\\\"quoted\\\"\",\"sequence\":42,\"kind\":\"REMOVED\"}");
        JsonNode removal = new ObjectMapper().readTree(written[0]);
        assertThat(removal.get("topic").asText()).isEqualTo("fx/\"quoted\"");
        assertThat(removal.has("value")).isFalse();
        assertThat(new ObjectMapper().readTree(written[1]).get("kind").asText()).isEqualTo("UPDATE");
    }

    @ParameterizedTest
    @EnumSource(value = ValueEncoding.class, names = {"BASE64", "HEX"})
    void binaryValuesPrintInTheEncodingAndDecodeBackToTheSameBytes(ValueEncoding encoding) throws IOException {
        Update binary = new TestUpdate("bin", 1, NOT_UTF8, UpdateKind.SNAPSHOT);

        String text = lines(UpdateFormat.TEXT, encoding, binary);
        JsonNode json = new ObjectMapper().readTree(lines(UpdateFormat.JSON, encoding, binary));

        String encoded = text.substring("bin 1 ".length(), text.length() - 1);
        assertThat(encoded).isEqualTo(json.get("value").asText()).doesNotContain("\n", " ");
        assertThat(encoding.decode(encoded)).isEqualTo(NOT_UTF8);
    }

    @Test
    void theEncodingsWriteWhatTheyAreNamedFor() {
        assertThat(ValueEncoding.HEX.encode(NOT_UTF8)).isEqualTo("00ffc3280a");
        assertThat(ValueEncoding.BASE64.encode(NOT_UTF8)).isEqualTo("AP/DKAo=");
        assertThat(ValueEncoding.UTF8.decode("é")).containsExactly(0xc3, 0xa9);
        assertThat(ValueEncoding.HEX.decode("00FFc3280A")).isEqualTo(NOT_UTF8);
        assertThat(List.of(ValueEncoding.values())).extracting(ValueEncoding::toString)
                .containsExactly("utf8", "base64", "hex");
    }

    @Test
    void textThatIsNotInTheEncodingIsRefusedSayingWhy() {
        assertThatThrownBy(() -> ValueEncoding.HEX.decode("abc")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ValueEncoding.BASE64.decode("not base64!")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Illegal base64 character");
    }
}
