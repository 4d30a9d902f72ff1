package io.ringcast.client;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.ringcast.client.internal.NettyRingcastClient;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Builder checks and the local syntax checks, which need no server. */
class RingcastClientBuilderTest {

    @Test
    void addressesAreRequiredAndMustBeWebSocketUrls() {
        assertThatThrownBy(() -> RingcastClient.builder().build())
                .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("addresses:");
        assertThatThrownBy(() -> RingcastClient.builder().addresses())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("addresses:");
        assertThatThrownBy(() -> RingcastClient.builder().addresses("http://h:8080/ws"))
                .hasMessageContaining("must start with ws://");
        assertThatThrownBy(() -> RingcastClient.builder().addresses("ws:///ws")).hasMessageContaining("no host");
        assertThatThrownBy(() -> RingcastClient.builder().addresses("ws://h:8080/ a"))
                .hasMessageContaining("is not a URL");
    }

    @Test
    void settingsAreCheckedAndNamed() {
        RingcastClient.Builder b = RingcastClient.builder();
        assertThatThrownBy(() -> b.reconnectDelay(Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessageStartingWith("reconnectDelay:");
        assertThatThrownBy(() -> b.reconnectDelay(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .hasMessageStartingWith("reconnectDelay:");
        assertThatThrownBy(() -> b.connectTimeout(Duration.ZERO)).hasMessageStartingWith("connectTimeout:");
        assertThatThrownBy(() -> b.maxFrameBytes(100)).hasMessageStartingWith("maxFrameBytes:");
        assertThatThrownBy(() -> b.maxInFlightPublishes(0)).hasMessageStartingWith("maxInFlightPublishes:");
        assertThatThrownBy(() -> b.clientName("x".repeat(70_000))).hasMessageStartingWith("clientName:");
        assertThatThrownBy(() -> b.connectionListener(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    @Timeout(30)
    void theTransportFollowsTheBuilderOrTheGroupGiven() {
        RingcastClient.Builder b = RingcastClient.builder().addresses("ws://127.0.0.1:1/ws");
        assertThatThrownBy(() -> b.transport(null)).isInstanceOf(NullPointerException.class);
        try (RingcastClient client = b.build()) {
            assertThat(((NettyRingcastClient) client).transport()).isEqualTo(Transport.AUTO.resolve("transport"));
        }
        try (RingcastClient client = RingcastClient.builder().addresses("ws://127.0.0.1:1/ws")
                .transport(Transport.NIO).build()) {
            assertThat(((NettyRingcastClient) client).transport()).isEqualTo(Transport.NIO);
        }

        EventLoopGroup nio = Transport.NIO.newEventLoopGroup(1, new DefaultThreadFactory("builder-test", true));
        EventLoopGroup local = new DefaultEventLoopGroup(1);
        try {
            try (RingcastClient client = RingcastClient.builder().addresses("ws://127.0.0.1:1/ws")
                    .eventLoopGroup(nio).build()) {
                assertThat(((NettyRingcastClient) client).transport()).as("the group's").isEqualTo(Transport.NIO);
            }
            Transport otherThanNio = Transport.autoOrder().get(0);
            if (otherThanNio != Transport.NIO) {
                assertThatThrownBy(() -> RingcastClient.builder().addresses("ws://127.0.0.1:1/ws").eventLoopGroup(nio)
                        .transport(otherThanNio).build())
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessage("transport: " + otherThanNio.configName() + " is not the transport of the "
                                + "eventLoopGroup given (nio); leave transport at auto to follow the group");
            }
            assertThatThrownBy(() -> RingcastClient.builder().eventLoopGroup(local))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("eventLoopGroup: a io.netty.channel.DefaultEventLoopGroup runs none of the socket "
                            + "channels of nio, epoll, io_uring");
        } finally {
            nio.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
            local.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void subscribeChecksTheSelectorAndPublishThePathLocally() {
        try (RingcastClient client = RingcastClient.builder().addresses("ws://127.0.0.1:1/ws").build()) {
            assertThat(client.state()).isEqualTo(ConnectionState.NEW);
            assertThatThrownBy(() -> client.subscribe("fx/#/bid", u -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'#' must be the last segment");
            assertThatThrownBy(() -> client.subscribe("fx//bid", u -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty segment");
            assertThat(client.subscribe("a/".repeat(100) + "#", u -> { }).selector()).startsWith("a/a/");

            assertThatThrownBy(() -> client.publish("fx/+/bid", new byte[0]).join()).cause()
                    .isInstanceOf(RingcastException.class).hasMessageContaining("wildcard")
                    .satisfies(e -> assertThat(((RingcastException) e).code()).isEqualTo(ErrorCode.INVALID_PATH));
            assertThatThrownBy(() -> client.publish("a b", new byte[0]).join()).cause()
                    .hasMessageContaining("whitespace");
        }
    }

    @Test
    void everyBuilderSettingIsDocumented() throws IOException {
        String doc = Files.readString(Path.of("..", "docs", "java-client.md"));
        Arrays.stream(RingcastClient.Builder.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !m.getName().equals("build"))
                .map(Method::getName)
                .forEach(name -> assertThat(doc).as("docs/java-client.md names " + name).contains("`" + name + "("));
    }
}
