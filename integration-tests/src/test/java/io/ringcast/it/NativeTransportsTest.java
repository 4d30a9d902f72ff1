package io.ringcast.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.internal.NettyRingcastClient;
import io.ringcast.protocol.Transport;
import io.ringcast.server.RingcastServer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Servers and Java clients on every transport this JVM runs (nio, and on Linux epoll and
 * io_uring), over real sockets: each server transport serves each client transport, every update
 * arrives once and in order, and {@code /health} names the transport the node runs on. Transports
 * this machine cannot run are skipped, never faked; the refusal of one is in
 * {@link ServerTransportProcessTest}, through Netty's own switch.
 */
@Timeout(120)
class NativeTransportsTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final int TOPICS = 5;
    static final int UPDATES_PER_TOPIC = 200;

    static List<Transport> available() {
        return Stream.of(Transport.NIO, Transport.EPOLL, Transport.IO_URING).filter(Transport::isAvailable).toList();
    }

    static Stream<Arguments> serverAndClientTransports() {
        List<Arguments> pairs = new ArrayList<>();
        for (Transport server : available()) {
            for (Transport client : available()) {
                pairs.add(Arguments.of(server, client));
            }
        }
        return pairs.stream();
    }

    static JsonNode health(RingcastServer server) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.port() + "/health")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @ParameterizedTest(name = "server on {0}, client on {1}")
    @MethodSource("serverAndClientTransports")
    void aServerOnEachTransportServesAClientOnEachInOrder(Transport serverTransport, Transport clientTransport)
            throws Exception {
        try (RingcastServer server = TestServers.start(serverTransport, "");
             RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl())
                     .transport(clientTransport).build()) {
            assertThat(health(server).get("transport").asText()).isEqualTo(serverTransport.configName());
            assertThat(((NettyRingcastClient) client).transport()).isEqualTo(clientTransport);

            publishAndReceiveInOrder(client, client);
        }
    }

    /** The client given an application's group opens the sockets of that group's transport. */
    @ParameterizedTest(name = "an application's {0} group")
    @MethodSource("available")
    void aClientOnAnApplicationsGroupRunsThatGroupsTransport(Transport transport) throws Exception {
        EventLoopGroup group = transport.newEventLoopGroup(2, new DefaultThreadFactory("app-loop", true));
        try (RingcastServer server = TestServers.start("");
             RingcastClient subscriber = RingcastClient.builder().addresses(server.webSocketUrl())
                     .eventLoopGroup(group).build();
             RingcastClient publisher = RingcastClient.builder().addresses(server.webSocketUrl())
                     .eventLoopGroup(group.next()).build()) {
            assertThat(((NettyRingcastClient) subscriber).transport()).isEqualTo(transport);
            assertThat(((NettyRingcastClient) publisher).transport()).as("one loop of the group").isEqualTo(transport);

            publishAndReceiveInOrder(subscriber, publisher);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    /**
     * A client that owns its event loop closes its socket before it stops the loop. On io_uring the
     * close completes only once the loop has handled the cancelled read: stopped first, the loop
     * waited out the client's 5 s shutdown timeout and logged a rejected task.
     */
    @ParameterizedTest(name = "a client on {0}")
    @MethodSource("available")
    void closingAClientThatOwnsItsLoopDoesNotWaitOutTheLoopsShutdown(Transport transport) throws Exception {
        try (RingcastServer server = TestServers.start("")) {
            for (int i = 0; i < 3; i++) {
                RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).transport(transport)
                        .build();
                client.connect().get(10, TimeUnit.SECONDS);
                client.publish("tr/close", new byte[]{1}).get(10, TimeUnit.SECONDS);
                long startNs = System.nanoTime();
                client.close();
                long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
                assertThat(tookMs).as("close() of a connected client on " + transport + ", ms").isLessThan(2_500);
            }
        }
    }

    /** NIO fails a bind with java.net.BindException, the native transports with their own exception. */
    @ParameterizedTest(name = "a server on {0}")
    @MethodSource("available")
    void aPortInUseIsNamedOnEveryTransport(Transport transport) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            assertThatThrownBy(() -> TestServers.startOn(taken.getLocalPort(), transport, ""))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("cannot listen on 127.0.0.1:" + taken.getLocalPort()
                            + " (server.host, server.port): ")
                    .hasMessageContaining("in use");
        }
    }

    @Test
    void autoIsTheFirstAvailableOfItsOrderAndANativeOneOnLinux() throws Exception {
        Transport expected = Transport.autoOrder().stream().filter(Transport::isAvailable).findFirst().orElseThrow();
        try (RingcastServer server = TestServers.start("");
             RingcastClient client = RingcastClient.builder().addresses(server.webSocketUrl()).build()) {
            String reported = health(server).get("transport").asText();
            assertThat(reported).isEqualTo(expected.configName());
            assertThat(((NettyRingcastClient) client).transport()).isEqualTo(expected);
            if (System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")) {
                assertThat(reported).as("auto on Linux (epoll: " + Transport.EPOLL.unavailabilityCause() + ")")
                        .isNotEqualTo("nio");
            }
            publishAndReceiveInOrder(client, client);
        }
    }

    /**
     * {@code subscriber} subscribes to {@code tr/#}; {@code publisher} publishes {@link #UPDATES_PER_TOPIC}
     * values to each of {@link #TOPICS} topics, interleaved; every one is acked and received once, in
     * sequence order per topic, with its value.
     */
    private static void publishAndReceiveInOrder(RingcastClient subscriber, RingcastClient publisher) throws Exception {
        subscriber.connect().get(10, TimeUnit.SECONDS);
        publisher.connect().get(10, TimeUnit.SECONDS);
        Recorded got = new Recorded();
        subscriber.subscribe("tr/#", got).confirmed().get(10, TimeUnit.SECONDS);

        List<CompletableFuture<Long>> acks = new ArrayList<>();
        for (int i = 0; i < UPDATES_PER_TOPIC; i++) {
            for (int t = 0; t < TOPICS; t++) {
                acks.add(publisher.publish("tr/t" + t, ("v" + i).getBytes(StandardCharsets.UTF_8)));
            }
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

        Await.until(() -> got.updates.size() == TOPICS * UPDATES_PER_TOPIC, "every update: " + got.updates.size());
        for (int t = 0; t < TOPICS; t++) {
            List<Recorded.Got> topic = got.of("tr/t" + t);
            assertThat(topic).extracting(Recorded.Got::sequence)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, UPDATES_PER_TOPIC).boxed().toList());
            assertThat(topic).extracting(Recorded.Got::text)
                    .containsExactlyElementsOf(LongStream.range(0, UPDATES_PER_TOPIC).mapToObj(i -> "v" + i).toList());
        }
        assertThat(got.updates).extracting(Recorded.Got::kind).containsOnly(UpdateKind.UPDATE);
        assertThat(got.errors).isEmpty();
    }
}
