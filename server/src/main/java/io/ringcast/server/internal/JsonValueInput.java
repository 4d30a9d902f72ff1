package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.InputStream;

/**
 * The bytes of one value, read by a Jackson streaming parser for a {@link ValueFilter} or a
 * {@link FieldProjection}: {@link #open} points this stream at a range of a buffer (a topic's frame
 * or a publish's slice, heap or direct) without copying it or moving its indices, and returns a
 * parser over it. The parser pulls the bytes in chunks as it reads, so an evaluation that stops
 * early copies only what it read.
 *
 * <p>Values are UTF-8 JSON: a value Jackson would read as UTF-16 or UTF-32 (it guesses from zero
 * bytes at the start, which UTF-8 JSON never has) gets no parser. The limits are Jackson's defaults,
 * written out here so that docs/subscription-options.md can name them: a value that breaks one is
 * invalid.
 *
 * <p>One per evaluator and reused: one thread only (the sequencer), asserted.
 */
final class JsonValueInput extends InputStream {
    static final int MAX_NESTING_DEPTH = 1000;
    static final int MAX_NUMBER_LENGTH = 1000;
    static final int MAX_STRING_LENGTH = 20_000_000;
    static final int MAX_NAME_LENGTH = 50_000;

    /**
     * Shared: Jackson factories are thread-safe. Field names are kept in the factory's symbol table
     * (so a name the parser has seen before costs no new String) but not interned in the JVM's
     * table, which publishers' keys would fill. Errors carry no copy of the value. Buffers are
     * recycled per thread, which here is the one evaluating thread.
     */
    static final JsonFactory JSON = JsonFactory.builder()
            .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .recyclerPool(JsonRecyclerPools.threadLocalPool())
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_NESTING_DEPTH)
                    .maxNumberLength(MAX_NUMBER_LENGTH)
                    .maxStringLength(MAX_STRING_LENGTH)
                    .maxNameLength(MAX_NAME_LENGTH)
                    .build())
            .build();

    private ByteBuf buf;
    private int next;
    private int end;
    private Thread owner;

    /**
     * A parser over {@code length} bytes of {@code buf} from {@code index} (absolute; neither index
     * of {@code buf} moves), whose byte offsets count from {@code index}; or null when the bytes are
     * not UTF-8. The caller closes it (which returns its buffers) before the next {@code open}.
     */
    JsonParser open(ByteBuf buf, int index, int length) throws IOException {
        assert onOwnerThread() : "a value evaluator is used by one thread only, the sequencer";
        this.buf = buf;
        this.next = index;
        this.end = index + length;
        JsonParser parser = JSON.createParser(this);
        if (parser.getInputSource() != this) {
            // Jackson wrapped this stream in a UTF-16/32 reader: offsets would count chars, not bytes
            parser.close();
            return null;
        }
        return parser;
    }

    private boolean onOwnerThread() {
        if (owner == null) {
            owner = Thread.currentThread();
        }
        return owner == Thread.currentThread();
    }

    @Override
    public int read() {
        return next < end ? buf.getByte(next++) & 0xFF : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        int n = Math.min(len, end - next);
        if (n <= 0) {
            return -1;
        }
        buf.getBytes(next, b, off, n);
        next += n;
        return n;
    }

    @Override
    public int available() {
        return Math.max(0, end - next);
    }

    /** Called by the parser's close: forgets the buffer, so that no reference outlives the call. */
    @Override
    public void close() {
        buf = null;
        next = end = 0;
    }
}
