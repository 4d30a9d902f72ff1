package io.ringcast.client;

import io.ringcast.testkit.DeflateBomb;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile server: it upgrades with permessage-deflate, welcomes the client, then sends one frame
 * of about 1 MB that inflates to 1 GiB. The client must end the session naming its frame limit,
 * and its heap must never hold what the frame inflates to. The server is a plain socket in this
 * test, since no Ringcast server would send such a frame.
 */
@Timeout(60)
class DecompressionBombFromServerTest {
    private static final int MAX_FRAME_BYTES = 4 * 1024 * 1024;
    private static final long INFLATED_BYTES = 1024L * 1024 * 1024;
    /** A quarter of what the bomb inflates to; the peak of heap used counts uncollected garbage too. */
    private static final long HEAP_GROWTH_BOUND_BYTES = INFLATED_BYTES / 4;

    @Test
    void frameInflatingPastTheClientsLimitEndsTheSessionNamingItWithinBoundedHeap() throws Exception {
        byte[] bomb = DeflateBomb.zeros(INFLATED_BYTES);
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        CompletableFuture<RingcastException> disconnected = new CompletableFuture<>();
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> serveBomb(listener, bomb));
            memory.gc();
            long baseline = memory.getHeapMemoryUsage().getUsed();
            long peak = baseline;
            try (RingcastClient client = RingcastClient.builder()
                    .addresses("ws://127.0.0.1:" + listener.getLocalPort() + "/ws")
                    .compression(true)
                    .maxFrameBytes(MAX_FRAME_BYTES)
                    .reconnectDelay(Duration.ofSeconds(30), Duration.ofSeconds(30)) // one session is enough
                    .connectionListener(new ConnectionListener() {
                        @Override
                        public void onDisconnected(String address, RingcastException reason, int closeCode) {
                            disconnected.complete(reason);
                        }
                    })
                    .build()) {
                client.connect().get(10, TimeUnit.SECONDS);
                while (!disconnected.isDone()) { // sampled while the frame is inflated
                    peak = Math.max(peak, memory.getHeapMemoryUsage().getUsed());
                    Thread.onSpinWait();
                }
                RingcastException reason = disconnected.get();
                assertThat(reason).as("why the session ended").isNotNull();
                assertThat(reason.getMessage()).contains("inflates to more than maxFrameBytes = " + MAX_FRAME_BYTES);
                assertThat(peak - baseline).as("client heap growth while the bomb arrived")
                        .isLessThan(HEAP_GROWTH_BOUND_BYTES);
            }
            served.get(10, TimeUnit.SECONDS);
        }
    }

    /** Upgrades one connection with permessage-deflate, reads HELLO, sends WELCOME, then the bomb. */
    private static void serveBomb(ServerSocket listener, byte[] bomb) {
        try (Socket socket = listener.accept()) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            String key = null;
            for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
                if (line.toLowerCase().startsWith("sec-websocket-key:")) {
                    key = line.substring(line.indexOf(':') + 1).trim();
                }
            }
            String accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1").digest(
                    (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII)));
            out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: " + accept + "\r\n"
                    + "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            skipFrame(in); // HELLO
            ByteBuf welcome = Unpooled.buffer();
            WireCodec.writeWelcome(welcome, WireCodec.VERSION, "bomb-session", MAX_FRAME_BYTES, 0);
            byte[] welcomeBytes = new byte[welcome.readableBytes()];
            welcome.readBytes(welcomeBytes);
            writeFrame(out, false, welcomeBytes);
            writeFrame(out, true, bomb);
            // wait for the client to close: reading until end of stream
            while (in.read() != -1) {
                // its close frame, then the end
            }
        } catch (IOException | java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("the bomb server failed", e);
        }
    }

    private static void writeFrame(OutputStream out, boolean compressed, byte[] payload) throws IOException {
        ByteArrayOutputStream frame = new ByteArrayOutputStream(payload.length + 10);
        frame.write(0x80 | (compressed ? 0x40 : 0) | 0x2); // FIN, RSV1 when compressed, binary
        if (payload.length < 126) {
            frame.write(payload.length);
        } else if (payload.length <= 0xFFFF) {
            frame.write(126);
            frame.write(payload.length >>> 8);
            frame.write(payload.length);
        } else {
            frame.write(127);
            for (int shift = 56; shift >= 0; shift -= 8) {
                frame.write((int) ((long) payload.length >>> shift));
            }
        }
        frame.write(payload);
        out.write(frame.toByteArray());
        out.flush();
    }

    private static void skipFrame(DataInputStream in) throws IOException {
        in.readUnsignedByte();
        int b1 = in.readUnsignedByte();
        long length = b1 & 0x7F;
        if (length == 126) {
            length = in.readUnsignedShort();
        } else if (length == 127) {
            length = in.readLong();
        }
        in.skipNBytes(((b1 & 0x80) != 0 ? 4 : 0) + length);
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }
}
