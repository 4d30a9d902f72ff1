package io.ringcast.server.cli;

import io.ringcast.client.ConnectionListener;
import io.ringcast.client.RingcastException;

import java.util.function.Consumer;

/**
 * A command's news of its connection for standard error, after the first connect (which the
 * command reports itself): "connection to URL lost (why); reconnecting", then "reconnected to URL"
 * (another node of a cluster, or the same one back). {@code sub}, {@code pub} and {@code remove}
 * alike.
 *
 * <p>Thread contract: the client calls it on its event loop; {@code notice} must not block.
 */
final class ConnectionNotices implements ConnectionListener {
    private final Consumer<String> notice;
    private boolean lost; // event loop only

    ConnectionNotices(Consumer<String> notice) {
        this.notice = notice;
    }

    @Override
    public void onConnected(String address, String sessionId) {
        if (lost) {
            lost = false;
            notice.accept("reconnected to " + address);
        }
    }

    @Override
    public void onDisconnected(String address, RingcastException reasonOrNull, int webSocketCloseCode) {
        if (reasonOrNull != null) {
            lost = true;
            notice.accept("connection to " + address + " lost (" + reasonOrNull.getMessage() + "); reconnecting");
        }
    }
}
