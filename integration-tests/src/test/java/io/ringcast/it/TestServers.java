package io.ringcast.it;

import at.favre.lib.crypto.bcrypt.BCrypt;
import io.ringcast.client.RingcastClient;
import io.ringcast.protocol.Transport;
import io.ringcast.server.RingcastServer;
import io.ringcast.server.config.ConfigLoader;

import java.util.concurrent.TimeUnit;

/**
 * Real servers on a free loopback port, configured from YAML as an operator would. Unless a test
 * writes its own {@code security} section, anonymous sessions may read and publish everything
 * (the shipped default allows only the demo subtree); a test with its own section adds
 * {@link #OPEN_TO_ANONYMOUS} to it where it needs that.
 */
final class TestServers {
    /** Keys of the {@code security} section granting anonymous sessions every topic. */
    static final String OPEN_TO_ANONYMOUS = "  anonymousRoles: [\"everything\"]\n  roles:\n    - name: \"everything\"\n"
            + "      subscribe: [\"#\"]\n      publish: [\"#\"]\n";

    /** Alice's password, for {@link #OPEN_WITH_ALICE}. */
    static final String ALICE_PASSWORD = "alice-password";
    /**
     * A {@code security} section granting anonymous sessions every topic, and a principal
     * {@code alice} (password {@link #ALICE_PASSWORD}) the same: for tests of what anonymous
     * sessions may take from a user who logs in.
     */
    static final String OPEN_WITH_ALICE = "security:\n" + OPEN_TO_ANONYMOUS
            + "  principals:\n    - name: \"alice\"\n      passwordHash: \""
            + BCrypt.withDefaults().hashToString(4, ALICE_PASSWORD.toCharArray()) + "\"\n      roles: [\"everything\"]\n";

    private TestServers() {
    }

    /** A server with the defaults plus {@code yaml} (top-level sections other than {@code server}). */
    static RingcastServer start(String yaml) throws InterruptedException {
        return startOnPort(0, yaml);
    }

    static RingcastServer start() throws InterruptedException {
        return start("");
    }

    /**
     * Like {@link #start(String)}, on a given loopback port (0: any free one), e.g. a restarted
     * server on the port its predecessor had.
     */
    static RingcastServer startOnPort(int port, String yaml) throws InterruptedException {
        return startOn(port, Transport.AUTO, yaml);
    }

    /** Like {@link #start(String)}, its sockets on {@code transport} ({@code server.transport}). */
    static RingcastServer start(Transport transport, String yaml) throws InterruptedException {
        return startOn(0, transport, yaml);
    }

    /** An anonymous Java client connected to {@code server}; the caller closes it. */
    static RingcastClient connect(RingcastServer server) throws Exception {
        RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build();
        client.connect().get(10, TimeUnit.SECONDS);
        return client;
    }

    /** Like {@link #start(String)}, on a given loopback port (0: any free one) and {@code transport}. */
    static RingcastServer startOn(int port, Transport transport, String yaml) throws InterruptedException {
        return RingcastServer.start(ConfigLoader.fromYaml("server:\n  host: 127.0.0.1\n  port: " + port
                + "\n  ioThreads: 2\n  transport: " + transport.configName() + "\n" + yaml
                + (yaml.contains("security:") ? "" : "security:\n" + OPEN_TO_ANONYMOUS)));
    }
}
