package io.ringcast.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The choice of transport: names, the order {@code auto} tries, refusals of an unavailable one,
 * and the groups and channel classes of each available one. Availability is the machine's; the
 * choice itself is also run against made-up availabilities ({@link Transport#select}).
 */
class TransportTest {

    private static final Throwable NOT_HERE = new UnsatisfiedLinkError("could not load a native library: made up");

    @Test
    void everyTransportReadsBackFromItsConfigName() {
        for (Transport t : Transport.values()) {
            assertThat(Transport.fromConfigName(t.configName())).isEqualTo(t);
        }
        assertThat(Transport.configNames()).isEqualTo("auto, nio, epoll, io_uring");
        assertThatThrownBy(() -> Transport.fromConfigName("iouring"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'iouring' is not one of auto, nio, epoll, io_uring");
    }

    @Test
    void autoTriesNativeTransportsThenNioWhichIsAlwaysAvailable() {
        assertThat(Transport.autoOrder()).doesNotContain(Transport.AUTO).last().isEqualTo(Transport.NIO);
        assertThat(Transport.NIO.isAvailable()).isTrue();
        assertThat(Transport.AUTO.isAvailable()).isTrue();
        assertThat(Transport.AUTO.resolve("transport")).isEqualTo(Transport.autoOrder().stream()
                .filter(Transport::isAvailable).findFirst().orElseThrow());
    }

    @Test
    void onLinuxEpollIsAvailableAndAutoIsNative() {
        assumeTrue(System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux"), "Linux only");
        assertThat(Transport.EPOLL.unavailabilityCause()).as("why epoll is unavailable").isNull();
        assertThat(Transport.AUTO.resolve("transport")).isNotEqualTo(Transport.NIO);
    }

    @Test
    void autoSkipsWhatIsUnavailable() {
        Map<Transport, Throwable> nativeMissing = Map.of(Transport.EPOLL, NOT_HERE, Transport.IO_URING, NOT_HERE);
        assertThat(Transport.select(Transport.AUTO, "transport", nativeMissing::get)).isEqualTo(Transport.NIO);
        assertThat(Transport.select(Transport.AUTO, "transport", t -> null)).isEqualTo(Transport.autoOrder().get(0));
    }

    @Test
    void aTransportAskedForByNameThatIsUnavailableIsRefusedNamingTheSettingAndTheCause() {
        assertThatThrownBy(() -> Transport.select(Transport.EPOLL, "key 'server.transport'", t -> NOT_HERE))
                .isInstanceOf(IllegalStateException.class)
                .hasCause(NOT_HERE)
                .hasMessage("key 'server.transport' is epoll, which is not available in this JVM: "
                        + "java.lang.UnsatisfiedLinkError: could not load a native library: made up; "
                        + "auto takes the first available of " + autoOrderNames());
    }

    @Test
    void theMessageNamesTheRootCauseToo() {
        Throwable cause = new UnsatisfiedLinkError("failed to load the required native library");
        cause.initCause(new UnsupportedOperationException("kernel too old"));
        assertThat(Transport.unavailableMessage("transport", Transport.IO_URING, cause))
                .startsWith("transport is io_uring, which is not available in this JVM: java.lang.UnsatisfiedLinkError: "
                        + "failed to load the required native library, caused by "
                        + "java.lang.UnsupportedOperationException: kernel too old; auto takes");
    }

    @Test
    void autoMakesNoGroupOrChannelItself() {
        assertThatThrownBy(() -> Transport.AUTO.newEventLoopGroup(1, new DefaultThreadFactory("t", true)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("resolve it first");
        assertThatThrownBy(Transport.AUTO::socketChannelClass).isInstanceOf(IllegalStateException.class);
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = "AUTO", mode = EnumSource.Mode.EXCLUDE)
    @Timeout(30)
    void anAvailableTransportsGroupIsRecognisedAsItsOwn(Transport transport) {
        assumeTrue(transport.isAvailable(), () -> transport + " is not available: " + transport.unavailabilityCause());
        EventLoopGroup group = transport.newEventLoopGroup(1, new DefaultThreadFactory("transport-test", true));
        try {
            assertThat(Transport.of(group)).isEqualTo(transport);
            assertThat(Transport.of(group.next())).isEqualTo(transport);
            assertThat(transport.socketChannelClass().getSimpleName()).containsIgnoringCase(transport.name()
                    .replace("_", ""));
            assertThat(transport.serverChannelClass().getSimpleName()).containsIgnoringCase(transport.name()
                    .replace("_", ""));
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(30)
    void aGroupOfNoTransportIsRefused() {
        EventLoopGroup group = new DefaultEventLoopGroup(1);
        try {
            assertThatThrownBy(() -> Transport.of(group))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("a io.netty.channel.DefaultEventLoopGroup runs none of the socket channels of nio, "
                            + "epoll, io_uring");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    private static String autoOrderNames() {
        return String.join(", ", Transport.autoOrder().stream().map(Transport::configName).toList());
    }
}
