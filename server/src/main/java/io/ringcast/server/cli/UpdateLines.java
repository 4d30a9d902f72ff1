package io.ringcast.server.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.ringcast.client.Update;

import java.io.IOException;
import java.io.Writer;

/**
 * Writes updates and removals to a {@link Writer}, one line each, in an {@link UpdateFormat} with
 * values in a {@link ValueEncoding}; {@link #flush()} once per batch. Only the thread that prints uses it.
 */
final class UpdateLines implements AutoCloseable {
    private static final JsonFactory JSON = JsonFactory.builder().build();
    /** The JSON {@code kind} of a removal's line, beside the {@link io.ringcast.client.UpdateKind} names of updates'. */
    static final String REMOVED = "REMOVED";

    private final Writer out;
    private final ValueEncoding values;
    private final JsonGenerator json;
    private final StringBuilder line = new StringBuilder(256);

    UpdateLines(Writer out, UpdateFormat format, ValueEncoding values) throws IOException {
        this.out = out;
        this.values = values;
        if (format == UpdateFormat.JSON) {
            json = JSON.createGenerator(out);
            json.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            json.setRootValueSeparator(null); // each object ends its own line (below); no space between them
        } else {
            json = null;
        }
    }

    /** Writes one update as one line. */
    void write(Update update) throws IOException {
        String value = values.encode(update.value());
        if (json != null) {
            json.writeStartObject();
            json.writeStringField("topic", update.topic());
            json.writeNumberField("sequence", update.sequence());
            json.writeStringField("kind", update.kind().name());
            json.writeStringField("value", value);
            json.writeEndObject();
            json.writeRaw('\n');
            return;
        }
        line.setLength(0);
        line.append(update.topic()).append(' ').append(update.sequence()).append(' ');
        if (values == ValueEncoding.UTF8) {
            appendEscaped(value, line);
        } else {
            line.append(value); // base64 and hex have nothing to escape
        }
        line.append('\n');
        out.append(line);
    }

    /**
     * Writes the removal of {@code topic} after its update {@code lastSequence} as one line: in text
     * {@code TOPIC removed after LASTSEQUENCE}, whose second word is never a number as an update's is;
     * in JSON the update's object with kind {@code REMOVED}, the last sequence, and no value.
     */
    void writeRemoved(String topic, long lastSequence) throws IOException {
        if (json != null) {
            json.writeStartObject();
            json.writeStringField("topic", topic);
            json.writeNumberField("sequence", lastSequence);
            json.writeStringField("kind", REMOVED);
            json.writeEndObject();
            json.writeRaw('\n');
            return;
        }
        line.setLength(0);
        line.append(topic).append(" removed after ").append(lastSequence).append('\n');
        out.append(line);
    }

    /** Pushes what was written to the output. */
    void flush() throws IOException {
        if (json != null) {
            json.flush();
        } else {
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        flush();
    }

    /** {@code text} with backslash and control characters escaped, so it stays on one line and reads back. */
    static void appendEscaped(String text, StringBuilder to) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\\' -> to.append("\\\\");
                case '\n' -> to.append("\\n");
                case '\r' -> to.append("\\r");
                case '\t' -> to.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        to.append(String.format("\\u%04x", (int) c));
                    } else {
                        to.append(c);
                    }
                }
            }
        }
    }
}
