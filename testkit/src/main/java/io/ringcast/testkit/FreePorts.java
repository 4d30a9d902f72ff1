package io.ringcast.testkit;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * TCP ports for servers a test configures before starting them. Chosen below Linux's ephemeral
 * range (32768 and up): a port the OS picks for {@code new ServerSocket(0)} can be handed to one
 * of a test's own client connections before the server binds it.
 */
public final class FreePorts {

    private FreePorts() {
    }

    /** A port nothing listens on now, between 20000 and 32000. */
    public static int pick() throws IOException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = random.nextInt(20000, 32000);
            try (ServerSocket s = new ServerSocket(port)) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port between 20000 and 32000");
    }
}
