package io.ringcast.client;

import io.ringcast.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

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
