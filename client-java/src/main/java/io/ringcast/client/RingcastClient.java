package io.ringcast.client;

import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.ringcast.client.internal.ClientConfig;
import io.ringcast.client.internal.NettyRingcastClient;
import io.ringcast.protocol.Credentials;
import io.ringcast.protocol.SubscribeOptions;
import io.ringcast.protocol.Transport;
import io.ringcast.protocol.WireCodec;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLException;

/**
 * A connection to a Ringcast server (or a list of them, tried in turn): subscribe to topics with
 * selectors, publish values. Build one with {@link #builder()}.
 *
 * <p><b>Threads.</b> Every method may be called from any thread. The client does its work on one
 * Netty event-loop thread; listeners and the completions of the returned futures run on that
 * thread, so they must not block (see {@link UpdateListener}).
 *
 * <p><b>Connection.</b> When a connection drops for any reason but {@link #close()}, the client
 * reconnects with exponential backoff and jitter, to the next address each time, re-subscribes
 * every open subscription and resumes each topic from the last sequence it delivered: the server
 * replays what was missed or says, with {@link UpdateKind#SNAPSHOT_AFTER_GAP}, that it cannot.
 * A listener never sees the same sequence of a topic twice as an {@link UpdateKind#UPDATE}, but
 * across a removal ({@link UpdateListener#onRemoved}): a topic created again at the path starts
 * from sequence 1.
 */
public interface RingcastClient extends AutoCloseable {

    /** {@return a new builder; {@link Builder#addresses} is required} */
    static Builder builder() {
        return new Builder();
    }

    /**
     * Starts connecting, to the first address first. Completes on the first {@code WELCOME}; fails
     * with a {@link RingcastException} naming the last failure when no address could be reached
     * within {@link Builder#connectTimeout}, and the client is then closed. Calling it again
     * returns the same future.
     *
     * @return completes once the first session is welcomed
     */
    CompletableFuture<Void> connect();

    /**
     * Subscribes to every topic that {@code selector} matches, now and later. The listener gets a
     * {@link UpdateKind#SNAPSHOT} of each existing topic, then the updates. May be called before
     * {@link #connect()}: the subscription is sent once connected.
     *
     * @param selector a topic path whose segments may be {@code +} (one segment) or, last,
     *                 {@code #} (the parent and everything below)
     * @param listener gets the subscription's updates, on the client's event-loop thread
     * @return the subscription, open until closed
     * @throws IllegalArgumentException when the selector is not valid, naming the rule it breaks
     *                                  (the server may still refuse it for its own, tighter limits:
     *                                  see {@link Subscription#confirmed()})
     */
    default Subscription subscribe(String selector, UpdateListener listener) {
        return subscribe(selector, SubscribeOptions.NONE, listener);
    }

    /**
     * Subscribes to every topic that {@code selector} matches, now and later, with options
     * (docs/subscription-options.md). {@code maxRate}, {@code fields} and {@code filter} make the
     * subscription's <b>view</b>: it receives only the values that pass the filter, each cut to the
     * named fields, at most {@code maxRate} per second per topic. A viewed subscription's stream
     * is its own: another subscription of the same topics, plain or with another view, receives
     * its own values, and the sequences of a view jump on purpose (values filtered out, unchanged
     * projections, throttled updates), with no gap implied; a value that stops passing the filter
     * comes as {@link UpdateListener#onUnmatched}, and the next that passes as an
     * {@link UpdateKind#UPDATE}. {@code rewind} and {@code rewindSince} shape only the reply to
     * the first {@code SUBSCRIBE}. The options travel in every {@code SUBSCRIBE} of the
     * subscription, the first and each one that resumes it after a reconnect. With
     * {@link SubscribeOptions#NONE} this is {@link #subscribe(String, UpdateListener)}.
     *
     * @param selector a topic path whose segments may be {@code +} (one segment) or, last,
     *                 {@code #} (the parent and everything below)
     * @param options  the subscription's options, e.g.
     *                 {@code SubscribeOptions.builder().fields("bid", "ask").filter("spread < 0.0005").build()}
     * @param listener gets the subscription's updates, on the client's event-loop thread
     * @return the subscription, open until closed; a server that refuses the options fails its
     *         {@link Subscription#confirmed()} and calls {@link UpdateListener#onError} with code
     *         {@link io.ringcast.protocol.ErrorCode#INVALID_OPTIONS} and the server's reason
     * @throws IllegalArgumentException when the selector is not valid, naming the rule it breaks
     */
    Subscription subscribe(String selector, SubscribeOptions options, UpdateListener listener);

    /**
     * Publishes {@code value} to {@code topic}, creating the topic on its first publish. Publishes
     * are sent in call order, batched with others into few frames; at most 1,024 are sent and
     * unacked at once (the protocol's rule, so that one sent again after a lost connection is
     * applied at most once), the rest wait in memory. The array is not copied: do not change it
     * until the returned future completes.
     *
     * @param topic the topic's path, e.g. {@code fx/EURUSD/bid}
     * @param value the value's bytes, not copied
     * @return completes with the sequence the topic gave the value; fails with a
     *         {@link RingcastException}: with an {@link io.ringcast.protocol.ErrorCode} when the
     *         server refused it (e.g. {@code INVALID_PATH}), or at once when the path is not valid,
     *         when {@link Builder#maxInFlightPublishes} publishes await their ack already, or when
     *         the client is closed; with a {@link PublishOutcomeUnknownException} when it was sent
     *         again after a lost connection and the server could no longer tell whether the first
     *         send was applied (it did not apply it again)
     */
    CompletableFuture<Long> publish(String topic, byte[] value);

    /**
     * Removes every existing topic that {@code selector} matches and that this client's roles let
     * it publish to (docs/protocol.md, "Removing topics"): its value, history and sequence go with
     * it, and every subscriber that had it is told ({@link UpdateListener#onRemoved}). A later
     * publish to a removed path creates it again, from sequence 1. Sent in call order with
     * publishes (a removal made after a publish does not overtake it), queued until connected
     * like a publish; it is never sent again by itself.
     *
     * @param selector a topic path whose segments may be {@code +} (one segment) or, last,
     *                 {@code #} (the parent and everything below), as for {@link #subscribe}
     * @return completes with the number of topics removed (0 when the selector matched none); fails
     *         with a {@link RingcastException}: with the server's {@link io.ringcast.protocol.ErrorCode}
     *         and reason when it refused the removal (e.g. {@code PERMISSION_DENIED},
     *         {@code INVALID_SELECTOR}, in a cluster {@code NO_MAJORITY}), with
     *         {@code INVALID_SELECTOR} at once when the selector is not valid here, without a code
     *         when the connection was lost after it was sent and before its answer (the removal may
     *         or may not have been applied: check before removing again) or when the client is closed
     */
    CompletableFuture<Integer> remove(String selector);

    /** {@return where the client stands now} */
    ConnectionState state();

    /**
     * Closes the connection and stops reconnecting; fails every pending future with a
     * {@link RingcastException}; shuts down the event loop the client owns (not one given to
     * {@link Builder#eventLoopGroup}). Idempotent.
     */
    @Override
    void close();

    /**
     * Configures a {@link RingcastClient}. Each setter checks its argument and names the setting
     * in the exception; {@link #build()} checks that {@link #addresses} was given. Not thread-safe;
     * build once, use the client from anywhere.
     */
    final class Builder {
        /** Default {@link #reconnectDelay} start: 100 ms. */
        public static final Duration DEFAULT_RECONNECT_DELAY_INITIAL = Duration.ofMillis(100);
        /** Default {@link #reconnectDelay} ceiling: 5 s. */
        public static final Duration DEFAULT_RECONNECT_DELAY_MAX = Duration.ofSeconds(5);
        /** Default {@link #connectTimeout}: 10 s. */
        public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
        /** Default {@link #maxFrameBytes}: 16 MiB. */
        public static final int DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
        /** Default {@link #maxInFlightPublishes}: 65536. */
        public static final int DEFAULT_MAX_IN_FLIGHT_PUBLISHES = 65536;
        /** The smallest {@link #maxFrameBytes} accepted. */
        public static final int MIN_MAX_FRAME_BYTES = 1024;
        /** The largest {@link #maxInFlightPublishes} accepted (publish correlation ids must stay unique). */
        public static final int MAX_MAX_IN_FLIGHT_PUBLISHES = 1 << 24;

        private final List<URI> addresses = new ArrayList<>();
        private String clientName = "ringcast-java";
        private EventLoopGroup eventLoopGroup;
        private Transport transport = Transport.AUTO;
        private Duration reconnectDelayInitial = DEFAULT_RECONNECT_DELAY_INITIAL;
        private Duration reconnectDelayMax = DEFAULT_RECONNECT_DELAY_MAX;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private int maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
        private int maxInFlightPublishes = DEFAULT_MAX_IN_FLIGHT_PUBLISHES;
        private ConnectionListener connectionListener = new ConnectionListener() { };
        private boolean compression = true;
        private Path trustedCertificates;
        private Credentials credentials = Credentials.ANONYMOUS;

        Builder() {
        }

        /**
         * Required. The servers' WebSocket URLs, e.g. {@code ws://127.0.0.1:8080/ws}; tried in this
         * order, round robin, one per attempt. A URL without a port uses 80 ({@code wss://}: 443).
         * Replaces earlier calls.
         *
         * @param wsUrls one or more {@code ws://} or {@code wss://} URLs
         * @return this builder
         */
        public Builder addresses(String... wsUrls) {
            Objects.requireNonNull(wsUrls, "addresses");
            if (wsUrls.length == 0) {
                throw new IllegalArgumentException("addresses: at least one WebSocket URL is required");
            }
            List<URI> parsed = new ArrayList<>(wsUrls.length);
            for (String url : wsUrls) {
                parsed.add(parseAddress(url));
            }
            addresses.clear();
            addresses.addAll(parsed);
            return this;
        }

        /**
         * Free text the server logs for this client's sessions. Default {@code ringcast-java}.
         *
         * @param clientName at most 65,535 UTF-8 bytes
         * @return this builder
         */
        public Builder clientName(String clientName) {
            Objects.requireNonNull(clientName, "clientName");
            int bytes = clientName.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > WireCodec.MAX_STRING_BYTES) {
                throw new IllegalArgumentException("clientName: " + bytes + " UTF-8 bytes, more than the "
                        + WireCodec.MAX_STRING_BYTES + " a string field holds");
            }
            this.clientName = clientName;
            return this;
        }

        /**
         * A Netty group to run on: the client takes one of its event loops and opens its sockets with
         * the channel class of the group's transport ({@code NioEventLoopGroup}: NIO,
         * {@code EpollEventLoopGroup}: epoll, {@code IOUringEventLoopGroup}: io_uring; or one event
         * loop of such a group). The client does not shut it down. Default: the client owns a
         * one-thread group of daemon threads on {@link #transport}.
         *
         * @param group the group the client takes an event loop from
         * @return this builder
         * @throws IllegalArgumentException for a group of none of those transports (e.g. a
         *                                  {@code DefaultEventLoopGroup}), whose loops cannot run a socket
         */
        public Builder eventLoopGroup(EventLoopGroup group) {
            Objects.requireNonNull(group, "eventLoopGroup");
            try {
                Transport.of(group);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("eventLoopGroup: " + e.getMessage(), e);
            }
            this.eventLoopGroup = group;
            return this;
        }

        /**
         * The Netty transport of the event loop the client owns: {@link Transport#AUTO} (the
         * default) takes the first available of {@link Transport#autoOrder()}, a native one on
         * Linux, else NIO;
         * {@link Transport#NIO}, {@link Transport#EPOLL} and {@link Transport#IO_URING} ask for that
         * one, and a native one this JVM cannot run is refused here, never replaced quietly. With
         * {@link #eventLoopGroup}, the group's transport is used: leave this at {@code AUTO}, or name
         * the same one.
         *
         * @param transport the transport
         * @return this builder
         * @throws IllegalArgumentException when {@code transport} is not available in this JVM, with
         *                                  the native library's reason
         */
        public Builder transport(Transport transport) {
            Objects.requireNonNull(transport, "transport");
            Throwable cause = transport.unavailabilityCause();
            if (cause != null) {
                throw new IllegalArgumentException(Transport.unavailableMessage("transport", transport, cause), cause);
            }
            this.transport = transport;
            return this;
        }

        /**
         * The delay before a reconnect attempt: {@code initial} after a drop, doubling per failed
         * attempt up to {@code max}, each delay drawn at random from its upper half (jitter).
         * Default 100 ms .. 5 s.
         *
         * @param initial the first delay, at least 1 ms
         * @param max     the ceiling, at least {@code initial} and at most 1 day
         * @return this builder
         */
        public Builder reconnectDelay(Duration initial, Duration max) {
            Objects.requireNonNull(initial, "reconnectDelay initial");
            Objects.requireNonNull(max, "reconnectDelay max");
            if (initial.toMillis() < 1) {
                throw new IllegalArgumentException("reconnectDelay: initial must be at least 1 ms, was " + initial);
            }
            if (max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("reconnectDelay: max (" + max + ") must not be below initial ("
                        + initial + ")");
            }
            if (max.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException("reconnectDelay: max must be at most 1 day, was " + max);
            }
            this.reconnectDelayInitial = initial;
            this.reconnectDelayMax = max;
            return this;
        }

        /**
         * How long {@link RingcastClient#connect()} keeps trying before it fails, and how long any
         * one attempt (TCP connect, WebSocket handshake, {@code WELCOME}) may take: all of it with
         * one address; with several, an equal share, 2 s at least, so that an address that
         * accepts connections but never answers leaves time for the others. Default 10 s.
         *
         * @param timeout 1 ms .. 2^31-1 ms
         * @return this builder
         */
        public Builder connectTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "connectTimeout");
            if (timeout.toMillis() < 1 || timeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("connectTimeout: must be 1 ms .. " + Integer.MAX_VALUE
                        + " ms, was " + timeout);
            }
            this.connectTimeout = timeout;
            return this;
        }

        /**
         * The largest WebSocket message the client accepts from the server; a larger one ends the
         * connection. Outbound frames follow the limit the server states in {@code WELCOME}.
         * Default 16 MiB.
         *
         * @param maxFrameBytes at least {@link #MIN_MAX_FRAME_BYTES}
         * @return this builder
         */
        public Builder maxFrameBytes(int maxFrameBytes) {
            if (maxFrameBytes < MIN_MAX_FRAME_BYTES) {
                throw new IllegalArgumentException("maxFrameBytes: must be at least " + MIN_MAX_FRAME_BYTES
                        + ", was " + maxFrameBytes);
            }
            this.maxFrameBytes = maxFrameBytes;
            return this;
        }

        /**
         * The most publishes queued or awaiting their ack at once; beyond it
         * {@link RingcastClient#publish} fails the future at once. Default 65536. Of these, at
         * most 1,024 are sent and unacked at a time; the others wait in memory.
         *
         * @param maxInFlightPublishes 1 .. {@link #MAX_MAX_IN_FLIGHT_PUBLISHES}
         * @return this builder
         */
        public Builder maxInFlightPublishes(int maxInFlightPublishes) {
            if (maxInFlightPublishes < 1 || maxInFlightPublishes > MAX_MAX_IN_FLIGHT_PUBLISHES) {
                throw new IllegalArgumentException("maxInFlightPublishes: must be 1.." + MAX_MAX_IN_FLIGHT_PUBLISHES
                        + ", was " + maxInFlightPublishes);
            }
            this.maxInFlightPublishes = maxInFlightPublishes;
            return this;
        }

        /**
         * Whether to offer WebSocket permessage-deflate; the server accepts it when compression is on
         * for some topics, and then compresses what is worth it. Default on.
         *
         * @param offer whether to offer it
         * @return this builder
         */
        public Builder compression(boolean offer) {
            this.compression = offer;
            return this;
        }

        /**
         * For {@code wss://} addresses: trust the CA or server certificates in this PEM file instead
         * of the JDK's default trust store (a private CA, a self-signed test server). The server's
         * host name is checked against its certificate either way.
         *
         * @param pemFile one or more PEM certificates
         * @return this builder
         */
        public Builder trustedCertificates(Path pemFile) {
            this.trustedCertificates = Objects.requireNonNull(pemFile, "trustedCertificates");
            return this;
        }

        /**
         * Log in as a principal of the server's {@code security.principals}. The password travels in
         * {@code HELLO}: use {@code wss://} beyond a trusted network. Default: anonymous.
         *
         * @param principal the principal's name
         * @param password  its password
         * @return this builder
         */
        public Builder password(String principal, String password) {
            this.credentials = Credentials.password(Objects.requireNonNull(principal, "principal"),
                    Objects.requireNonNull(password, "password"));
            return this;
        }

        /**
         * Log in with a signed token (JWT, HS256 or RS256) the server is configured to verify. Default: anonymous.
         *
         * @param jwt the encoded token
         * @return this builder
         */
        public Builder token(String jwt) {
            this.credentials = Credentials.token(Objects.requireNonNull(jwt, "token"));
            return this;
        }

        /**
         * Told of every session start and end. Default: none.
         *
         * @param listener called on the client's event-loop thread
         * @return this builder
         */
        public Builder connectionListener(ConnectionListener listener) {
            this.connectionListener = Objects.requireNonNull(listener, "connectionListener");
            return this;
        }

        /**
         * A new client, not connected yet: call {@link RingcastClient#connect()}.
         *
         * @return the client
         * @throws IllegalStateException when {@link #addresses} was not given, or when {@link #transport}
         *                               names another transport than {@link #eventLoopGroup}'s
         */
        public RingcastClient build() {
            if (addresses.isEmpty()) {
                throw new IllegalStateException("addresses: at least one WebSocket URL is required");
            }
            Transport runOn = eventLoopGroup != null ? Transport.of(eventLoopGroup) : transport.resolve("transport");
            if (transport != Transport.AUTO && transport != runOn) {
                throw new IllegalStateException("transport: " + transport.configName() + " is not the transport of the "
                        + "eventLoopGroup given (" + runOn.configName() + "); leave transport at auto to follow the group");
            }
            return new NettyRingcastClient(new ClientConfig(List.copyOf(addresses), clientName, eventLoopGroup, runOn,
                    reconnectDelayInitial.toMillis(), reconnectDelayMax.toMillis(), connectTimeout.toMillis(),
                    maxFrameBytes, maxInFlightPublishes, connectionListener, compression, tlsContext(), credentials));
        }

        /** TLS for {@code wss://} addresses, or null when every address is {@code ws://}. */
        private SslContext tlsContext() {
            if (addresses.stream().noneMatch(a -> "wss".equalsIgnoreCase(a.getScheme()))) {
                return null;
            }
            try {
                SslContextBuilder tls = SslContextBuilder.forClient();
                if (trustedCertificates != null) {
                    tls.trustManager(trustedCertificates.toFile());
                }
                return tls.build();
            } catch (SSLException | IllegalArgumentException e) {
                throw new IllegalArgumentException("trustedCertificates: cannot use " + trustedCertificates + ": "
                        + e.getMessage(), e);
            }
        }

        private static URI parseAddress(String url) {
            Objects.requireNonNull(url, "addresses: a URL is null");
            URI uri;
            try {
                uri = new URI(url);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("addresses: '" + url + "' is not a URL: " + e.getMessage(), e);
            }
            if (!"ws".equalsIgnoreCase(uri.getScheme()) && !"wss".equalsIgnoreCase(uri.getScheme())) {
                throw new IllegalArgumentException("addresses: '" + url + "' must start with ws:// or wss://");
            }
            if (uri.getHost() == null || uri.getHost().isEmpty()) {
                throw new IllegalArgumentException("addresses: '" + url + "' names no host");
            }
            return uri;
        }
    }
}
