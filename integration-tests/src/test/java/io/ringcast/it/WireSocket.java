package io.ringcast.it;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.WireCodec;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * A WebSocket peer written on a plain TCP socket, so a test sees the wire itself: the upgrade
 * response's headers (which extension was negotiated), each frame's RSV1 bit and size as sent, and
 * the messages inside (inflating permessage-deflate frames, RFC 7692). Reads only when asked, so
 * it can also play a subscriber that stops reading. One thread.
 */
final class WireSocket implements AutoCloseable {
    /** One server frame as it came off the wire. */
    record Frame(boolean compressed, int wireBytes, int payloadBytes) {
    }

    private static final byte[] DEFLATE_TAIL = {0, 0, (byte) 0xff, (byte) 0xff};

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final Map<String, String> responseHeaders = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    private final Inflater inflater = new Inflater(true);
    final List<Frame> frames = new CopyOnWriteArrayList<>();
    /** Whether a WebSocket ping from the server is answered, as every WebSocket stack does by itself. */
    boolean answerPings = true;
    final List<RawWebSocket.Msg> messages = new CopyOnWriteArrayList<>();

    /**
     * Opens a connection and upgrades it, offering {@code extensions} (a
     * {@code Sec-WebSocket-Extensions} value) or nothing when null.
     *
     * @param receiveBufferBytes the socket's receive buffer (small, to play a slow subscriber), or 0 for the default
     */
    WireSocket(String wsUrl, String extensions, int receiveBufferBytes) throws IOException {
        this(wsUrl, extensions, receiveBufferBytes, Map.of());
    }

    /** The same, with more upgrade request headers, such as a browser's {@code Origin}. */
    WireSocket(String wsUrl, String extensions, int receiveBufferBytes, Map<String, String> headers) throws IOException {
        URI uri = URI.create(wsUrl);
        socket = new Socket();
        if (receiveBufferBytes > 0) {
            socket.setReceiveBufferSize(receiveBufferBytes); // before connect, so the window is small
        }
        socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5000);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream(), 65536));
        out = socket.getOutputStream();
        byte[] nonce = new byte[16];
        new SecureRandom().nextBytes(nonce);
        String request = "GET " + uri.getPath() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
                + Base64.getEncoder().encodeToString(nonce) + "\r\n"
                + (extensions == null ? "" : "Sec-WebSocket-Extensions: " + extensions + "\r\n")
                + headers.entrySet().stream().map(h -> h.getKey() + ": " + h.getValue() + "\r\n")
                        .collect(java.util.stream.Collectors.joining()) + "\r\n";
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String status = readLine(in);
        if (!status.startsWith("HTTP/1.1 101")) {
            throw new IOException("upgrade refused: " + status);
        }
        for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
            int colon = line.indexOf(':');
            responseHeaders.put(line.substring(0, colon).trim(), line.substring(colon + 1).trim());
        }
    }

    /**
     * Marks one idle timeout of {@code wsUrl}'s server gone by, for tests about what does not
     * happen in that time: a session that answers nothing, not even pings, is closed with
     * {@code IDLE_TIMEOUT}. Returns that error message.
     */
    static RawWebSocket.Msg awaitIdleTimeoutOfASilentPeer(String wsUrl) throws IOException {
        try (WireSocket silent = new WireSocket(wsUrl, null, 0)) {
            silent.answerPings = false;
            silent.hello();
            return silent.awaitMessage("ERROR");
        }
    }

    /** The upgrade response's {@code Sec-WebSocket-Extensions}, or null when none was negotiated. */
    String negotiatedExtensions() {
        return responseHeaders.get("Sec-WebSocket-Extensions");
    }

    void hello() throws IOException {
        send(b -> WireCodec.writeHello(b, WireCodec.VERSION, "wire-test"));
        awaitMessage("WELCOME");
    }

    /** The handshake giving a publisher id, anonymously. */
    void hello(long publisherId) throws IOException {
        send(b -> WireCodec.writeHello(b, WireCodec.VERSION, "wire-test", Credentials.ANONYMOUS, publisherId));
        awaitMessage("WELCOME");
    }

    /** Sends the messages {@code writer} writes as one masked binary frame. */
    void send(Consumer<ByteBuf> writer) throws IOException {
        ByteBuf buf = Unpooled.buffer();
        writer.accept(buf);
        byte[] payload = new byte[buf.readableBytes()];
        buf.readBytes(payload);
        sendFrame(0x2, payload);
    }

    /**
     * Sends one message already compressed as RFC 7692 says (raw deflate, the 4-byte tail of the
     * final empty block removed) in {@code frames} frames: RSV1 on the first, the rest
     * continuations. Nothing checks that it inflates to something sensible: that is the point.
     */
    void sendDeflated(byte[] deflated, int frames) throws IOException {
        int step = (deflated.length + frames - 1) / frames;
        for (int i = 0, from = 0; i < frames; i++, from += step) {
            byte[] part = java.util.Arrays.copyOfRange(deflated, from, Math.min(deflated.length, from + step));
            sendFrame(i == frames - 1, i == 0, i == 0 ? 0x2 : 0x0, part);
        }
    }

    /** Sends a close frame with {@code status} (any value, as a peer may) and no reason. */
    void sendClose(int status) throws IOException {
        sendFrame(0x8, new byte[] {(byte) (status >>> 8), (byte) status});
    }

    /**
     * Sends a binary frame's header declaring {@code declaredBytes} of payload, then only the first
     * {@code sentBytes} of it: a message the server must hold, incomplete, until the rest comes.
     */
    void sendPartOfFrame(int declaredBytes, int sentBytes) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream(14);
        head.write(0x80 | 0x2);
        head.write(0x80 | 127);
        for (int shift = 56; shift >= 0; shift -= 8) {
            head.write((int) ((long) declaredBytes >>> shift));
        }
        head.write(new byte[] {1, 2, 3, 4}); // the mask: the payload's zeros go out as the mask's bytes
        out.write(head.toByteArray());
        byte[] payload = new byte[sentBytes];
        for (int i = 0; i < sentBytes; i++) {
            payload[i] = (byte) (1 + (i & 3));
        }
        out.write(payload);
        out.flush();
    }

    /** Sends {@code payload} as the first fragment of a binary message (FIN clear), which the server holds until the last. */
    void sendFirstFragment(byte[] payload) throws IOException {
        sendFrame(false, false, 0x2, payload);
    }

    private void sendFrame(int opcode, byte[] payload) throws IOException {
        sendFrame(true, false, opcode, payload);
    }

    private void sendFrame(boolean fin, boolean rsv1, int opcode, byte[] payload) throws IOException {
        ByteArrayOutputStream frame = new ByteArrayOutputStream(payload.length + 14);
        frame.write((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode);
        if (payload.length < 126) {
            frame.write(0x80 | payload.length);
        } else if (payload.length <= 0xFFFF) {
            frame.write(0x80 | 126);
            frame.write(payload.length >>> 8);
            frame.write(payload.length);
        } else {
            frame.write(0x80 | 127);
            for (int shift = 56; shift >= 0; shift -= 8) {
                frame.write((int) ((long) payload.length >>> shift));
            }
        }
        byte[] mask = {1, 2, 3, 4};
        frame.write(mask);
        byte[] masked = new byte[payload.length];
        for (int i = 0; i < payload.length; i++) {
            masked[i] = (byte) (payload[i] ^ mask[i & 3]);
        }
        frame.write(masked);
        out.write(frame.toByteArray());
        out.flush();
    }

    /** Reads frames until a message of {@code type} has arrived; returns the first such. */
    RawWebSocket.Msg awaitMessage(String type) throws IOException {
        while (true) {
            for (RawWebSocket.Msg m : messages) {
                if (m.type().equals(type)) {
                    return m;
                }
            }
            readFrame();
        }
    }

    /** Reads frames until {@code n} messages of {@code type} have arrived. */
    List<RawWebSocket.Msg> awaitMessages(String type, int n) throws IOException {
        while (messages.stream().filter(m -> m.type().equals(type)).count() < n) {
            readFrame();
        }
        return messages.stream().filter(m -> m.type().equals(type)).toList();
    }

    /**
     * Reads frames until {@code n} messages of {@code type} have arrived, counting them without
     * keeping them (a flood's replies); other messages are kept as usual. Returns the messages read.
     */
    long countMessages(String type, long n) throws IOException {
        long counted = 0;
        List<RawWebSocket.Msg> frameMessages = new java.util.ArrayList<>();
        while (counted < n) {
            frameMessages.clear();
            readFrame(frameMessages);
            for (RawWebSocket.Msg m : frameMessages) {
                if (m.type().equals(type)) {
                    counted++;
                } else {
                    messages.add(m);
                }
            }
        }
        return counted;
    }

    /**
     * Reads frames, handing each message to {@code each} instead of keeping it (a reply of tens of
     * thousands of messages), until {@code each} returns false; the rest of that frame's messages
     * are kept as usual.
     */
    void readMessages(java.util.function.Predicate<RawWebSocket.Msg> each) throws IOException {
        List<RawWebSocket.Msg> frameMessages = new java.util.ArrayList<>();
        while (true) {
            frameMessages.clear();
            readFrame(frameMessages);
            for (int i = 0; i < frameMessages.size(); i++) {
                if (!each.test(frameMessages.get(i))) {
                    messages.addAll(frameMessages.subList(i + 1, frameMessages.size()));
                    return;
                }
            }
        }
    }

    /** Reads one frame (blocking, at most the socket timeout), records it and decodes its messages. */
    Frame readFrame() throws IOException {
        return readFrame(messages);
    }

    private Frame readFrame(List<RawWebSocket.Msg> messages) throws IOException {
        int b0 = in.readUnsignedByte();
        int b1 = in.readUnsignedByte();
        int header = 2;
        long length = b1 & 0x7F;
        if (length == 126) {
            length = in.readUnsignedShort();
            header += 2;
        } else if (length == 127) {
            length = in.readLong();
            header += 8;
        }
        byte[] payload = new byte[(int) length];
        in.readFully(payload);
        int opcode = b0 & 0x0F;
        boolean rsv1 = (b0 & 0x40) != 0;
        Frame f = new Frame(rsv1, header + payload.length, payload.length);
        frames.add(f);
        if (opcode == 0x2) {
            byte[] plain = rsv1 ? inflate(payload) : payload;
            RawWebSocket.decodeInto(Unpooled.wrappedBuffer(plain), messages);
        } else if (opcode == 0x8) {
            messages.add(new RawWebSocket.Msg("CLOSE", payload.length >= 2 ? ((payload[0] & 0xFF) << 8)
                    | (payload[1] & 0xFF) : 0, 0, 0, null, null));
        } else if (opcode == 0x9) {
            messages.add(new RawWebSocket.Msg("WEBSOCKET_PING", 0, 0, 0, null, payload));
            if (answerPings) {
                sendFrame(0xA, payload);
            }
        }
        return f;
    }

    /** RFC 7692 7.2.2: append the removed empty block, inflate; the server takes over no context. */
    private byte[] inflate(byte[] compressed) throws IOException {
        inflater.reset();
        byte[] input = new byte[compressed.length + DEFLATE_TAIL.length];
        System.arraycopy(compressed, 0, input, 0, compressed.length);
        System.arraycopy(DEFLATE_TAIL, 0, input, compressed.length, DEFLATE_TAIL.length);
        inflater.setInput(input);
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        try {
            while (!inflater.needsInput()) {
                int n = inflater.inflate(chunk);
                if (n == 0 && inflater.needsInput()) {
                    break;
                }
                plain.write(chunk, 0, n);
            }
        } catch (DataFormatException e) {
            throw new IOException("bad permessage-deflate frame: " + e.getMessage(), e);
        }
        return plain.toByteArray();
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    @Override
    public void close() throws IOException {
        inflater.end();
        socket.close();
    }
}
