package io.ringcast.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * This machine's TCP sockets as the kernel lists them in {@code /proc/net/tcp} and {@code tcp6}
 * (of this network namespace), for tests that check what connections exist or what the kernel holds
 * for them. Java's sockets are dual-stack: an IPv4 address shows in {@code tcp6} as
 * {@code ::ffff:a.b.c.d}, whose last word is the IPv4 address's hex.
 */
public final class TcpSockets {
    /** The kernel's state code of an established connection. */
    public static final int ESTABLISHED = 0x01;
    /** The kernel's state code of a listening socket. */
    public static final int LISTEN = 0x0A;

    /**
     * One socket. Addresses are the kernel's hex (IPv4: its four bytes little-endian, as 8 digits;
     * IPv6: 32 digits).
     *
     * @param sendQueueBytes what the kernel holds unsent or unacknowledged on it
     */
    public record Socket(String localAddressHex, int localPort, String remoteAddressHex, int remotePort, int state,
                         long sendQueueBytes) {
    }

    private TcpSockets() {
    }

    /** Every TCP socket of this namespace, IPv4 and IPv6. */
    public static List<Socket> all() throws IOException {
        List<Socket> sockets = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path file = Path.of(table);
            if (!Files.exists(file)) {
                continue;
            }
            List<String> lines = Files.readAllLines(file);
            for (String line : lines.subList(1, lines.size())) { // after the header
                // sl local_address rem_address st tx_queue:rx_queue ...
                String[] f = line.trim().split("\\s+");
                int localColon = f[1].indexOf(':');
                int remoteColon = f[2].indexOf(':');
                sockets.add(new Socket(f[1].substring(0, localColon), Integer.parseInt(f[1].substring(localColon + 1), 16),
                        f[2].substring(0, remoteColon), Integer.parseInt(f[2].substring(remoteColon + 1), 16),
                        Integer.parseInt(f[3], 16), Long.parseLong(f[4].substring(0, f[4].indexOf(':')), 16)));
            }
        }
        return sockets;
    }
}
