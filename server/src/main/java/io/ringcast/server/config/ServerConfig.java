package io.ringcast.server.config;

import static io.ringcast.server.config.ConfigRules.atLeast;
import static io.ringcast.server.config.ConfigRules.availableTransport;
import static io.ringcast.server.config.ConfigRules.between;
import static io.ringcast.server.config.ConfigRules.hostName;
import static io.ringcast.server.config.ConfigRules.powerOfTwoBetween;
import static io.ringcast.server.config.ConfigRules.zeroOrBetween;

import io.ringcast.protocol.PathLimits;
import io.ringcast.protocol.Transport;
import java.util.List;
import java.util.Objects;

/**
 * The server's whole configuration: immutable, one record per YAML section.
 *
 * <p>Obtain it from {@link ConfigLoader}, which merges a file over the embedded defaults
 * ({@code defaults.yaml} next to this class, the one place defaults are written), binds it strictly
 * and validates every key once. The canonical constructors do not check ranges, so a test may build
 * an out-of-range config on purpose; only configs from {@link ConfigLoader} are validated.
 *
 * <p>Adding a section: a nested record here, a component of this record, a block in
 * {@code defaults.yaml}, a {@code validate()} with one line per key (checks that span keys in a
 * class of their own, as {@code SecurityRules}), a line in {@link #validate()}, and a table in
 * {@code docs/configuration.md}.
 *
 * <p>Thread safety: immutable; share freely.
 */
public record ServerConfig(Server server, Limits limits, History history, Pipeline pipeline, Session session,
                           Features features, State state, Security security, Demo demo,
                           Cluster cluster) {

    public ServerConfig {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(history, "history");
        Objects.requireNonNull(pipeline, "pipeline");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(features, "features");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(security, "security");
        Objects.requireNonNull(demo, "demo");
        Objects.requireNonNull(cluster, "cluster");
    }

    /** The embedded defaults, as loaded from {@code defaults.yaml}. */
    public static ServerConfig defaults() {
        return ConfigLoader.defaults();
    }

    /** Checks every key's range; throws {@link ConfigException} naming the first bad key. */
    void validate() {
        server.validate();
        limits.validate();
        history.validate();
        pipeline.validate();
        session.validate();
        features.validate(limits.pathLimits());
        state.validate();
        security.validate();
        demo.validate();
        cluster.validate();
    }

    /** This config with its {@code features} section replaced: what a hot reload applies. */
    public ServerConfig withFeatures(Features newFeatures) {
        return new ServerConfig(server, limits, history, pipeline, session, newFeatures, state, security, demo, cluster);
    }

    /**
     * Section {@code server}: where to listen, how many event loops and on which transport.
     *
     * @param host      address to bind
     * @param port      TCP port, 0 for any free port
     * @param ioThreads Netty event loops, each also a fan-out ring reader; 0 for one per core
     * @param transport the Netty transport of the event loops and sockets; {@link Transport#AUTO}
     *                  for the native one where available, else NIO
     */
    public record Server(String host, int port, int ioThreads, Transport transport) {

        public Server {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(transport, "transport");
        }

        /** {@link #ioThreads()}, or the number of available processors when it is 0. */
        public int effectiveIoThreads() {
            return ioThreads == 0 ? Runtime.getRuntime().availableProcessors() : ioThreads;
        }

        void validate() {
            hostName("server.host", host);
            between("server.port", port, 0, 65535);
            zeroOrBetween("server.ioThreads", ioThreads, "one per core", 1, 256);
            availableTransport("server.transport", transport, transport.unavailabilityCause());
        }
    }

    /**
     * Section {@code limits}: per-frame, per-path and per-session bounds.
     *
     * @param maxFrameBytes              largest WebSocket frame either side accepts
     * @param maxPathBytes               most UTF-8 bytes in a topic path or selector
     * @param maxPathDepth               most segments in a topic path or selector
     * @param maxSubscriptionsPerSession open subscriptions per session
     * @param outboundQueueBytes         unsent bytes per session before it is a slow consumer
     * @param slowConsumerCloseGraceMs   how long a slow consumer's connection stays open after its
     *                                   {@code SLOW_CONSUMER} error is queued
     * @param handshakeTimeoutMs         time allowed from accept to the WebSocket upgrade (TLS handshake
     *                                   included), between HTTP requests on one connection, and from
     *                                   the upgrade to {@code HELLO}
     * @param maxValueBytes              largest value a publish may carry
     * @param maxTopics                  topics the node holds at most; a publish that would create one more is refused
     * @param maxConnections             sessions at once; one more is refused before {@code WELCOME}
     * @param maxConnectionsBeforeUpgrade connections at once that have not completed a WebSocket upgrade
     *                                   (plain HTTP or mid-upgrade); one more is closed on accept
     * @param publishRatePerSession      publishes per second per session, with one second of burst; 0 for no limit
     * @param publisherLedgers           publishers' ledgers kept for {@code REPUBLISH}, sessions open or not, in total
     * @param publisherLedgersPerPrincipal the same, per principal (all anonymous sessions are one principal)
     * @param maxViews                   distinct subscription views ({@code maxRate}, {@code fields},
     *                                   {@code filter}) the node serves at once; a subscription that would
     *                                   make one more is refused
     * @param maxViewsPerSession         distinct views one session's subscriptions may have
     * @param maxTopicsPerPrincipal      topics one principal's publishes may create (all anonymous
     *                                   sessions are one principal), of {@code maxTopics}; a single node's bound
     * @param socketSendBufferBytes      each client connection's kernel send buffer ({@code SO_SNDBUF});
     *                                   0 leaves it to the system, which grows it up to
     *                                   {@code net.ipv4.tcp_wmem}'s maximum (4 MiB on Linux)
     */
    public record Limits(int maxFrameBytes, int maxPathBytes, int maxPathDepth, int maxSubscriptionsPerSession,
                         long outboundQueueBytes, long slowConsumerCloseGraceMs, long handshakeTimeoutMs,
                         int maxValueBytes, int maxTopics, int maxConnections, int maxConnectionsBeforeUpgrade,
                         int publishRatePerSession, int publisherLedgers, int publisherLedgersPerPrincipal,
                         int maxViews, int maxViewsPerSession, int maxViewsPerPrincipal, int maxConnectionsPerPrincipal,
                         long subscribeBytesPerSession, long subscribeBytesPerPrincipal, int maxTopicsPerPrincipal,
                         int socketSendBufferBytes, long incompleteMessageBytes, int maxSubscriptions,
                         int maxSubscriptionsPerPrincipal, int heapRefusePercent) {
        /** The least {@link #incompleteMessageBytes} given. */
        public static final long MIN_INCOMPLETE_MESSAGE_BYTES = 1 << 20;

        /** The path limits for the protocol's path and selector parsers. */
        public PathLimits pathLimits() {
            return new PathLimits(maxPathBytes, maxPathDepth);
        }

        void validate() {
            between("limits.maxFrameBytes", maxFrameBytes, 4096, 67108864);
            between("limits.maxPathBytes", maxPathBytes, 1, 65535);
            between("limits.maxPathDepth", maxPathDepth, 1, 128);
            atLeast("limits.maxSubscriptionsPerSession", maxSubscriptionsPerSession, 1);
            atLeast("limits.outboundQueueBytes", outboundQueueBytes, 65536);
            between("limits.slowConsumerCloseGraceMs", slowConsumerCloseGraceMs, 0, 60000);
            between("limits.handshakeTimeoutMs", handshakeTimeoutMs, 100, 600000);
            between("limits.maxValueBytes", maxValueBytes, 1, 67108864);
            between("limits.maxTopics", maxTopics, 1, 1_000_000_000);
            between("limits.maxConnections", maxConnections, 1, 10_000_000);
            between("limits.maxConnectionsBeforeUpgrade", maxConnectionsBeforeUpgrade, 1, 10_000_000);
            between("limits.publishRatePerSession", publishRatePerSession, 0, 100_000_000);
            between("limits.publisherLedgers", publisherLedgers, 1, 10_000_000);
            between("limits.publisherLedgersPerPrincipal", publisherLedgersPerPrincipal, 1, 10_000_000);
            between("limits.maxViews", maxViews, 0, 1_000_000);
            between("limits.maxViewsPerSession", maxViewsPerSession, 0, 1_000_000);
            between("limits.maxViewsPerPrincipal", maxViewsPerPrincipal, 0, 1_000_000);
            between("limits.maxConnectionsPerPrincipal", maxConnectionsPerPrincipal, 1, 10_000_000);
            atLeast("limits.subscribeBytesPerSession", subscribeBytesPerSession, 65536);
            atLeast("limits.subscribeBytesPerPrincipal", subscribeBytesPerPrincipal, 65536);
            between("limits.maxTopicsPerPrincipal", maxTopicsPerPrincipal, 1, 1_000_000_000);
            zeroOrBetween("limits.socketSendBufferBytes", socketSendBufferBytes, "the system's, grown as it sees fit",
                    4096, 67108864);
            zeroOrBetween("limits.maxSubscriptions", maxSubscriptions, "one per KiB of half the heap limit", 1,
                    1_000_000_000);
            zeroOrBetween("limits.maxSubscriptionsPerPrincipal", maxSubscriptionsPerPrincipal,
                    "nine tenths of limits.maxSubscriptions", 1, 1_000_000_000);
            zeroOrBetween("limits.heapRefusePercent", heapRefusePercent, "never refused for the heap", 50, 95);
            zeroOrBetween("limits.incompleteMessageBytes", incompleteMessageBytes,
                    "a fifth of the JVM's direct memory limit", MIN_INCOMPLETE_MESSAGE_BYTES, Long.MAX_VALUE);
            if (incompleteMessageBytes != 0 && incompleteMessageBytes < maxFrameBytes) {
                throw new ConfigException("limits.incompleteMessageBytes", "key 'limits.incompleteMessageBytes' is "
                        + incompleteMessageBytes + ", less than limits.maxFrameBytes (" + maxFrameBytes
                        + "): a client could not send its largest message");
            }
        }

        /**
         * {@link #maxSubscriptions} in force in a JVM whose heap is bounded at {@code heapLimit} bytes:
         * the one given, or one per KiB of half that limit (a subscription with a selector of its own
         * took about 1 KB of heap, measured with 1,024 distinct wildcard selectors a session).
         */
        public int maxSubscriptionsWithin(long heapLimit) {
            return maxSubscriptions != 0 ? maxSubscriptions : (int) Math.min(1_000_000_000, Math.max(1, heapLimit / 2 / 1024));
        }

        /** {@link #maxSubscriptionsPerPrincipal} in force: the one given, or nine tenths of {@code maxSubscriptions} in force. */
        public int maxSubscriptionsPerPrincipalWithin(long heapLimit) {
            return maxSubscriptionsPerPrincipal != 0 ? maxSubscriptionsPerPrincipal
                    : Math.max(1, maxSubscriptionsWithin(heapLimit) / 10 * 9);
        }

        /**
         * {@link #incompleteMessageBytes} in force in a JVM whose direct memory is bounded at
         * {@code directMemoryLimit} bytes: the one given, or a fifth of that limit (at least two of
         * {@link #maxFrameBytes}). A value given above the limit is refused, naming both.
         */
        public long incompleteMessageBytesWithin(long directMemoryLimit) {
            if (incompleteMessageBytes == 0) {
                return Math.max(Math.max(MIN_INCOMPLETE_MESSAGE_BYTES, 2L * maxFrameBytes), directMemoryLimit / 5);
            }
            if (incompleteMessageBytes > directMemoryLimit) {
                throw new ConfigException("limits.incompleteMessageBytes", "key 'limits.incompleteMessageBytes' is "
                        + incompleteMessageBytes + " but this JVM's direct memory, where messages are received, is "
                        + "bounded at " + directMemoryLimit + " bytes (-XX:MaxDirectMemorySize): lower the key, or "
                        + "raise the bound (JAVA_OPTS)");
            }
            return incompleteMessageBytes;
        }
    }

    /**
     * Section {@code history}.
     *
     * @param length   updates kept per topic, so a reconnecting client can resume without a gap
     * @param maxBytes the most bytes one topic's history may take: the oldest updates go first (the
     *                 newest is always kept)
     * @param nodeMaxBytes the most bytes all topics' histories may take together, newest values
     *                 included: past it, the topics updated longest ago let their older updates go,
     *                 then their newest values; 0 for two fifths of the JVM's direct memory limit, where the
     *                 histories live
     * @param nodeMaxEntries the most updates all topics' histories may hold together, newest values
     *                 included, let go as past {@code nodeMaxBytes}: each holds about
     *                 {@link #ENTRY_HEAP_BYTES} of heap whatever its size, which {@code nodeMaxBytes}
     *                 (direct memory) does not see; 0 for as many as a fifth of the heap holds
     */
    public record History(int length, long maxBytes, long nodeMaxBytes, long nodeMaxEntries) {
        /** The least {@link #nodeMaxBytes} given: a few topics' histories. */
        public static final long MIN_NODE_MAX_BYTES = 1 << 20;
        /** The least {@link #nodeMaxEntries} given: a few topics' histories. */
        public static final long MIN_NODE_MAX_ENTRIES = 1 << 12;
        /**
         * Heap one update kept in a history takes beside its frame: Netty's pooled buffer object
         * (88 B) and its recycler handle (24 B), and its slots in the topic's arrays (20 B, up to
         * twice that while they grow). Measured with class histograms of a node whose histories grew.
         */
        public static final long ENTRY_HEAP_BYTES = 160;

        void validate() {
            between("history.length", length, 1, 65536);
            atLeast("history.maxBytes", maxBytes, 65536);
            zeroOrBetween("history.nodeMaxBytes", nodeMaxBytes, "two fifths of the JVM's direct memory limit",
                    MIN_NODE_MAX_BYTES, Long.MAX_VALUE);
            zeroOrBetween("history.nodeMaxEntries", nodeMaxEntries, "as many as a fifth of the heap holds",
                    MIN_NODE_MAX_ENTRIES, Long.MAX_VALUE);
        }

        /**
         * {@link #nodeMaxEntries} in force in a JVM whose heap is bounded at {@code heapLimit} bytes: the
         * one given, or as many updates as a fifth of the heap holds at {@link #ENTRY_HEAP_BYTES} each.
         */
        public long nodeMaxEntriesWithin(long heapLimit) {
            return nodeMaxEntries != 0 ? nodeMaxEntries
                    : Math.max(MIN_NODE_MAX_ENTRIES, heapLimit / 5 / ENTRY_HEAP_BYTES);
        }

        /**
         * {@link #nodeMaxBytes} in force in a JVM whose direct memory is bounded at {@code directMemoryLimit}
         * bytes: the one given, or half that limit. A value given above the limit is refused, naming both:
         * the node would run out of direct memory (and stop) before its histories reached it.
         */
        public long nodeMaxBytesWithin(long directMemoryLimit) {
            if (nodeMaxBytes == 0) {
                return Math.max(MIN_NODE_MAX_BYTES, directMemoryLimit / 5 * 2);
            }
            if (nodeMaxBytes > directMemoryLimit) {
                throw new ConfigException("history.nodeMaxBytes", "key 'history.nodeMaxBytes' is " + nodeMaxBytes
                        + " but this JVM's direct memory, where histories live, is bounded at " + directMemoryLimit
                        + " bytes (-XX:MaxDirectMemorySize): lower the key, or raise the bound (JAVA_OPTS)");
            }
            return nodeMaxBytes;
        }
    }

    /**
     * Section {@code pipeline}: the Disruptor rings.
     *
     * @param inboundRingSize slots in the inbound (sequencer) ring, a power of two
     * @param fanOutRingSize  slots in the fan-out ring, a power of two
     * @param fanOutRingBytes the most bytes of updates' frames on the fan-out ring, not yet written by every reader
     * @param waitStrategy    how ring consumers wait for work
     * @param flushPolicy     when fan-out readers flush what they wrote
     * @param flushMaxDelayUs with {@link FlushPolicy#MAX_DELAY}: the shortest time between two drains of a loop,
     *                        so the longest an update waits for its drain; with {@link FlushPolicy#ADAPTIVE}, the
     *                        most that time may grow to under load
     */
    public record Pipeline(int inboundRingSize, int fanOutRingSize, long fanOutRingBytes, WaitStrategyKind waitStrategy,
                           FlushPolicy flushPolicy, int flushMaxDelayUs) {

        public Pipeline {
            Objects.requireNonNull(waitStrategy, "waitStrategy");
            Objects.requireNonNull(flushPolicy, "flushPolicy");
        }

        void validate() {
            powerOfTwoBetween("pipeline.inboundRingSize", inboundRingSize, 64, 16777216);
            powerOfTwoBetween("pipeline.fanOutRingSize", fanOutRingSize, 64, 16777216);
            atLeast("pipeline.fanOutRingBytes", fanOutRingBytes, 1048576);
            between("pipeline.flushMaxDelayUs", flushMaxDelayUs, 1, 100000);
        }
    }

    /**
     * Section {@code session}.
     *
     * @param idleTimeoutMs close a session that sent nothing for this long; 0 for never
     */
    public record Session(long idleTimeoutMs) {

        void validate() {
            zeroOrBetween("session.idleTimeoutMs", idleTimeoutMs, "never", 1000, 3600000);
        }
    }

    /**
     * Section {@code state}: topics kept across a graceful restart.
     *
     * @param file where the node saves its topics (sequences, history, last values) when it stops
     *             and takes them back from when it starts; empty for none
     */
    public record State(String file) {

        public State {
            Objects.requireNonNull(file, "file");
        }

        /** Whether topics are carried across a restart. */
        public boolean enabled() {
            return !file.isEmpty();
        }

        void validate() {
            if (file.isBlank() && !file.isEmpty()) {
                throw new ConfigException("state.file", "key 'state.file' must be a file path, or empty for none, got "
                        + ConfigText.quote(file));
            }
        }
    }

    /**
     * Section {@code security}: TLS, which web pages may connect, who a client is and what it may do.
     *
     * @param tlsCertificateFile    PEM certificate chain for {@code wss://} and {@code https://}; empty for plain TCP
     * @param tlsPrivateKeyFile     its PEM private key (PKCS#8, unencrypted); set together with the certificate
     * @param allowedOrigins        the {@code Origin}s whose pages may open a WebSocket (e.g.
     *                              {@code https://app.example.com}); empty for any. Clients that send no
     *                              {@code Origin} (programs, not pages) are not concerned.
     * @param anonymousRoles        the roles of a session that sends no credentials; empty: such sessions are refused
     * @param roles                 named grants of {@code subscribe} and {@code publish} selectors
     * @param principals            who may log in with a password, and their roles
     * @param jwtHs256Secret        the shared secret tokens signed with HS256 verify against; empty for none
     * @param jwtRs256PublicKeyFile PEM public key tokens signed with RS256 verify against; empty for none
     */
    public record Security(String tlsCertificateFile, String tlsPrivateKeyFile, List<String> allowedOrigins,
                           List<String> anonymousRoles, List<Role> roles, List<Principal> principals,
                           String jwtHs256Secret, String jwtRs256PublicKeyFile) {

        public Security {
            Objects.requireNonNull(tlsCertificateFile, "tlsCertificateFile");
            Objects.requireNonNull(tlsPrivateKeyFile, "tlsPrivateKeyFile");
            allowedOrigins = List.copyOf(Objects.requireNonNull(allowedOrigins, "allowedOrigins"));
            anonymousRoles = List.copyOf(Objects.requireNonNull(anonymousRoles, "anonymousRoles"));
            roles = List.copyOf(Objects.requireNonNull(roles, "roles"));
            principals = List.copyOf(Objects.requireNonNull(principals, "principals"));
            Objects.requireNonNull(jwtHs256Secret, "jwtHs256Secret");
            Objects.requireNonNull(jwtRs256PublicKeyFile, "jwtRs256PublicKeyFile");
        }

        /** Whether connections are TLS. */
        public boolean tls() {
            return !tlsCertificateFile.isEmpty();
        }

        /** The role of that name, or null. */
        public Role role(String name) {
            return roles.stream().filter(r -> r.name().equals(name)).findFirst().orElse(null);
        }

        void validate() {
            SecurityRules.validate(this);
        }

        /**
         * A named grant.
         *
         * @param name      how principals, tokens and {@code anonymousRoles} refer to it
         * @param subscribe selectors of the topics a holder may receive
         * @param publish   selectors of the topics a holder may publish to
         */
        public record Role(String name, List<String> subscribe, List<String> publish) {
        }

        /**
         * Someone who logs in with a password.
         *
         * @param name         the principal's name, sent in {@code HELLO}
         * @param passwordHash bcrypt hash of the password
         * @param roles        the roles the principal holds
         */
        public record Principal(String name, String passwordHash, List<String> roles) {
        }
    }

    /**
     * Section {@code demo}: the built-in publisher behind the demo page at {@code /}.
     *
     * @param enabled          publish simulated FX quotes under {@code demo/fx/}
     * @param instruments      how many instruments ({@code demo/fx/EURUSD} ...)
     * @param updatesPerSecond updates per second over all instruments, each to a random instrument
     */
    public record Demo(boolean enabled, int instruments, int updatesPerSecond) {

        /** The most instruments: every ordered pair of the publisher's currencies. */
        public static final int MAX_INSTRUMENTS = 992;

        void validate() {
            between("demo.instruments", instruments, 1, MAX_INSTRUMENTS);
            between("demo.updatesPerSecond", updatesPerSecond, 1, 100000);
        }
    }

    /**
     * Section {@code cluster}: this node as one of a static set of members that form one Raft group
     * (jgroups-raft): every publish is an entry of the group's log, committed on a majority, and
     * applied on every node in log order (docs/clustering.md).
     *
     * @param enabled              join the cluster; off: a single node
     * @param nodeName             this node's name, one of {@code members}
     * @param dataDir              where this node keeps its Raft log and snapshots; empty for
     *                             {@code data/<nodeName>} under the working directory
     * @param commitFsync          whether an entry is forced to disk before a member counts it as
     *                             held, so that commit means fsync on a majority
     * @param replicationTimeoutMs how long a publish may wait for its entry to be committed before the
     *                             publisher gets {@code REPLICATION_TIMEOUT}
     * @param failureDetectionMs   a member not heard from for this long is suspected (a frozen or cut-off
     *                             leader is replaced 1 to 1.75 times this after it stops, plus a vote round)
     * @param voteTimeoutMs        how long an election round waits for votes
     * @param snapshotLogBytes     log bytes after which a node snapshots its state (each topic's sequence,
     *                             history and last value, the publishers' ledgers) and truncates its log,
     *                             at least (also twice the last snapshot's bytes)
     * @param members              every node of the cluster, this one included; a majority of them must
     *                             hold an entry for it to be committed
     * @param engine               the consensus engine: {@code jgroups} (one group) or {@code ratis}
     * @param groups               Raft groups the topics are spread over on {@code ratis}; 0 for one per member
     */
    public record Cluster(boolean enabled, String nodeName, String dataDir, boolean commitFsync,
                          long replicationTimeoutMs, long failureDetectionMs, long voteTimeoutMs,
                          long snapshotLogBytes, List<Member> members, String engine, int groups,
                          String secretFile) {

        public Cluster {
            Objects.requireNonNull(nodeName, "nodeName");
            Objects.requireNonNull(secretFile, "secretFile");
            Objects.requireNonNull(dataDir, "dataDir");
            Objects.requireNonNull(engine, "engine");
            members = List.copyOf(members);
        }

        /** {@code groups}, with 0 as one per member; always 1 on {@code jgroups}. */
        public int groupsOrDefault() {
            if (!"ratis".equals(engine)) {
                return 1;
            }
            return groups == 0 ? Math.max(1, members.size()) : groups;
        }

        void validate() {
            ClusterRules.validate(this);
        }

        /** {@code dataDir}, or {@code data/<nodeName>} when it is empty. */
        public String dataDirOrDefault() {
            return dataDir.isEmpty() ? "data/" + nodeName : dataDir;
        }

        /**
         * One member.
         *
         * @param name           unique node name
         * @param host           the address it binds and peers reach it on
         * @param membershipPort its JGroups TCP port (failure detection also listens on one of the
         *                       ten ports from {@code membershipPort + 1000})
         */
        public record Member(String name, String host, int membershipPort) {
        }
    }
}
