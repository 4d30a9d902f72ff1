package io.ringcast.testkit;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * TCP ports for servers a test configures before starting them. Chosen below Linux's ephemeral
 * range (32768 and up): a port the OS picks for {@code new ServerSocket(0)} can be handed to one
 * of a test's own client connections before the server binds it. A port handed out is not handed
 * out again for the next {@value #RECENT} picks of this JVM: its server may not have bound it yet
 * (a cluster's five nodes got the same client port twice once, and one node could not start).
 */
public final class FreePorts {
    private static final int RECENT = 1_000;
    /** The ports handed out last, oldest first. Guarded by the class. */
    private static final LinkedHashSet<Integer> handedOut = new LinkedHashSet<>();

    private FreePorts() {
    }

    /** A port nothing listens on now, between 20000 and 32000, and none of the last {@value #RECENT} picks. */
    public static synchronized int pick() throws IOException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = random.nextInt(20000, 32000);
            if (handedOut.contains(port)) {
                continue;
            }
            try {
                new ServerSocket(port).close(); // nothing listens there now
            } catch (IOException taken) {
                continue;
            }
            handedOut.add(port);
            if (handedOut.size() > RECENT) {
                Iterator<Integer> oldest = handedOut.iterator();
                oldest.next();
                oldest.remove();
            }
            return port;
        }
        throw new IOException("no free port between 20000 and 32000");
    }

    /**
     * {@code count} free ports, none of them within {@code [q + offset, q + offset + range)} of
     * another one q: a cluster's membership ports on one host, each followed by the ports its
     * failure detector may take (a node refuses a config in which a member's port is among them).
     */
    public static int[] pickApart(int count, int offset, int range) throws IOException {
        int[] ports = new int[count];
        for (int i = 0; i < count; i++) {
            int p;
            do {
                p = pick();
            } while (!apart(p, ports, i, offset, range));
            ports[i] = p;
        }
        return ports;
    }

    private static boolean apart(int p, int[] chosen, int n, int offset, int range) {
        for (int j = 0; j < n; j++) {
            int q = chosen[j];
            if (p == q || (p >= q + offset && p < q + offset + range) || (q >= p + offset && q < p + offset + range)) {
                return false;
            }
        }
        return true;
    }
}
