package io.ringcast.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback that a test can cut, like a network failure between a client and the
 * server: {@link #cut()} drops every open connection, and while {@link #refuse} is on, new ones are
 * dropped as soon as they arrive. Plain blocking sockets: it is test scaffolding, not product code.
 */
final class CuttableProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean refusing;

    CuttableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String webSocketUrl() {
        return "ws://127.0.0.1:" + listener.getLocalPort() + "/ws";
    }

    /** While on, new connections are closed at once (the server is "unreachable"). */
    void refuse(boolean on) {
        refusing = on;
    }

    /** Drops every open connection. */
    void cut() {
        for (Socket s : open) {
            closeQuietly(s);
        }
        open.clear();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (refusing) {
                    closeQuietly(client);
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                open.add(client);
                open.add(server);
                pipe(client, server);
                pipe(server, client);
            } catch (IOException e) {
                // listener closed, or target unreachable: the client sees a dropped connection
            }
        }
    }

    private void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                }
            } catch (IOException ignored) {
                // cut or closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-pipe");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        cut();
    }
}
