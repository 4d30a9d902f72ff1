package io.ringcast.protocol;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.incubator.channel.uring.IOUring;
import io.netty.incubator.channel.uring.IOUringEventLoopGroup;
import io.netty.incubator.channel.uring.IOUringServerSocketChannel;
import io.netty.incubator.channel.uring.IOUringSocketChannel;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The Netty transport that the server and the Java client run their sockets on: its event loops
 * and its socket channel classes. {@link #NIO} runs anywhere; {@link #EPOLL} and
 * {@link #IO_URING} are Linux's native transports, available where their native library loads
 * (the jars carry it for x86_64 and ARM). {@link #AUTO} is the first available of
 * {@link #autoOrder()}, and always NIO at worst; a transport asked for by name that is not
 * available is refused with its native library's reason ({@link #unavailableMessage}), never
 * replaced quietly.
 *
 * <p>The one place the choice is made: the server's {@code server.transport}, the client's
 * {@code RingcastClient.Builder.transport} and the load generator's {@code --transport} all
 * resolve here. The native classes are touched only through the two nested holders, and only
 * once their availability check has passed, so the class works where their jars are missing.
 *
 * <p>Thread safety: immutable; any thread. Availability is probed once per JVM (by Netty).
 */
public enum Transport {
    /** The first available of {@link #autoOrder()}: a native transport on Linux, NIO elsewhere. */
    AUTO("auto"),
    /** Java's NIO selector: every platform. */
    NIO("nio"),
    /** Linux epoll through Netty's native library. */
    EPOLL("epoll"),
    /** Linux io_uring through Netty's incubator library; needs a kernel that allows it (5.9 or later). */
    IO_URING("io_uring");

    /**
     * What {@link #AUTO} tries, in order. io_uring is left to be named: measured on 2 cores
     * (docs/benchmarks.md, "Native transports"), epoll's server did as well or better than io_uring's
     * at saturation (1,000 subscribers: lower latency, no more CPU per delivery), and clients on
     * io_uring delivered less for more CPU; io_uring's server spent less CPU per delivery only below
     * saturation. It is also the incubator's last 0.0.x release, built on an older Netty 4.1.
     */
    private static final List<Transport> AUTO_ORDER = List.of(EPOLL, NIO);

    private final String configName;

    Transport(String configName) {
        this.configName = configName;
    }

    /** {@return the spelling in configs, command lines and {@code /health}: auto, nio, epoll, io_uring} */
    public String configName() {
        return configName;
    }

    /**
     * The transport spelled {@code name} (exactly, as {@link #configName()} gives it).
     *
     * @param name {@code auto}, {@code nio}, {@code epoll} or {@code io_uring}
     * @return the transport of that name
     * @throws IllegalArgumentException for any other name, listing the valid ones
     */
    public static Transport fromConfigName(String name) {
        for (Transport t : values()) {
            if (t.configName.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("'" + name + "' is not one of " + configNames());
    }

    /** {@return every {@link #configName()}, comma-separated, for messages: auto, nio, epoll, io_uring} */
    public static String configNames() {
        return Arrays.stream(values()).map(Transport::configName).collect(Collectors.joining(", "));
    }

    /** {@return the transports {@link #AUTO} tries, in order; NIO, always available, is last} */
    public static List<Transport> autoOrder() {
        return AUTO_ORDER;
    }

    /** {@return whether this JVM can run the transport; always true for {@link #AUTO} and {@link #NIO}} */
    public boolean isAvailable() {
        return unavailabilityCause() == null;
    }

    /**
     * Why this JVM cannot run the transport: the native library's own reason (not Linux, another
     * CPU, the kernel refuses io_uring, {@code -Dio.netty.transport.noNative=true}, the jar
     * missing), or null when it can.
     *
     * @return the reason, or null when the transport is available
     */
    public Throwable unavailabilityCause() {
        // a native transport whose classes are missing from the class path is unavailable too
        try {
            return switch (this) {
                case AUTO, NIO -> null;
                case EPOLL -> EpollClasses.unavailabilityCause();
                case IO_URING -> IoUringClasses.unavailabilityCause();
            };
        } catch (LinkageError e) {
            return e;
        }
    }

    /**
     * The transport to run: this one, or for {@link #AUTO} the first available of
     * {@link #autoOrder()}.
     *
     * @param setting how the caller names the setting that chose this transport, for the message
     *                ({@code key 'server.transport'}, {@code transport}, {@code --transport})
     * @return a transport other than {@link #AUTO}, available in this JVM
     * @throws IllegalStateException when this transport was asked for by name and is not available,
     *                               with {@link #unavailableMessage}
     */
    public Transport resolve(String setting) {
        return select(this, setting, Transport::unavailabilityCause);
    }

    /**
     * {@link #resolve} with the availability given: the choice itself, apart from the probes of
     * the native libraries, so that a test can make a transport unavailable.
     */
    static Transport select(Transport requested, String setting, Function<Transport, Throwable> unavailability) {
        if (requested == AUTO) {
            for (Transport t : AUTO_ORDER) {
                if (unavailability.apply(t) == null) {
                    return t;
                }
            }
            throw new AssertionError("NIO is always available");
        }
        Throwable cause = unavailability.apply(requested);
        if (cause != null) {
            throw new IllegalStateException(unavailableMessage(setting, requested, cause), cause);
        }
        return requested;
    }

    /**
     * The refusal of a transport asked for by name that this JVM cannot run, e.g. {@code key
     * 'server.transport' is epoll, which is not available in this JVM:
     * java.lang.UnsatisfiedLinkError: ...; auto takes the first available of epoll, nio}.
     *
     * @param setting   how the caller names the setting, first in the message
     * @param transport the transport asked for
     * @param cause     its {@link #unavailabilityCause()}
     * @return the message
     */
    public static String unavailableMessage(String setting, Transport transport, Throwable cause) {
        StringBuilder why = new StringBuilder(String.valueOf(cause));
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root != cause) {
            why.append(", caused by ").append(root);
        }
        return setting + " is " + transport.configName + ", which is not available in this JVM: " + why
                + "; " + AUTO.configName + " takes the first available of "
                + AUTO_ORDER.stream().map(Transport::configName).collect(Collectors.joining(", "));
    }

    /**
     * A new event-loop group of this transport.
     *
     * @param threads       its event loops, at least 1
     * @param threadFactory makes their threads
     * @return the group; the caller shuts it down
     * @throws IllegalStateException for {@link #AUTO} ({@link #resolve} it first), or when the
     *                               transport is not available
     */
    public EventLoopGroup newEventLoopGroup(int threads, ThreadFactory threadFactory) {
        Objects.requireNonNull(threadFactory, "threadFactory");
        return switch (runnable()) {
            case NIO -> new NioEventLoopGroup(threads, threadFactory);
            case EPOLL -> EpollClasses.group(threads, threadFactory);
            case IO_URING -> IoUringClasses.group(threads, threadFactory);
            case AUTO -> throw new AssertionError();
        };
    }

    /**
     * {@return the server socket channel class for a {@code ServerBootstrap} on this transport's groups}
     *
     * @throws IllegalStateException for {@link #AUTO}, or when the transport is not available
     */
    public Class<? extends ServerSocketChannel> serverChannelClass() {
        return switch (runnable()) {
            case NIO -> NioServerSocketChannel.class;
            case EPOLL -> EpollClasses.serverChannel();
            case IO_URING -> IoUringClasses.serverChannel();
            case AUTO -> throw new AssertionError();
        };
    }

    /**
     * {@return the socket channel class for a {@code Bootstrap} on this transport's groups}
     *
     * @throws IllegalStateException for {@link #AUTO}, or when the transport is not available
     */
    public Class<? extends SocketChannel> socketChannelClass() {
        return switch (runnable()) {
            case NIO -> NioSocketChannel.class;
            case EPOLL -> EpollClasses.socketChannel();
            case IO_URING -> IoUringClasses.socketChannel();
            case AUTO -> throw new AssertionError();
        };
    }

    /**
     * The transport whose channels {@code group} runs: a group of one of the transports' groups,
     * or one event loop of such a group.
     *
     * @param group an application's group
     * @return {@link #NIO}, {@link #EPOLL} or {@link #IO_URING}
     * @throws IllegalArgumentException for a group of none of them (a {@code DefaultEventLoopGroup},
     *                                  kqueue, a local or embedded loop)
     */
    public static Transport of(EventLoopGroup group) {
        Objects.requireNonNull(group, "group");
        EventLoopGroup g = group instanceof EventLoop loop && loop.parent() != null ? loop.parent() : group;
        if (g instanceof NioEventLoopGroup) {
            return NIO;
        }
        // a group of a native transport exists only where that transport is available
        if (EPOLL.isAvailable() && EpollClasses.runs(g)) {
            return EPOLL;
        }
        if (IO_URING.isAvailable() && IoUringClasses.runs(g)) {
            return IO_URING;
        }
        throw new IllegalArgumentException("a " + group.getClass().getName() + " runs none of the socket channels of "
                + NIO.configName + ", " + EPOLL.configName + ", " + IO_URING.configName);
    }

    /** This transport, when it can make groups and channels: available, and not {@link #AUTO}. */
    private Transport runnable() {
        if (this == AUTO) {
            throw new IllegalStateException("auto is a choice, not a transport: resolve it first");
        }
        return resolve("transport");
    }

    /** Every reference to the epoll classes: loaded only once {@link #EPOLL} is known available. */
    private static final class EpollClasses {
        static Throwable unavailabilityCause() {
            return Epoll.isAvailable() ? null : Epoll.unavailabilityCause();
        }

        static EventLoopGroup group(int threads, ThreadFactory threadFactory) {
            return new EpollEventLoopGroup(threads, threadFactory);
        }

        static Class<? extends ServerSocketChannel> serverChannel() {
            return EpollServerSocketChannel.class;
        }

        static Class<? extends SocketChannel> socketChannel() {
            return EpollSocketChannel.class;
        }

        static boolean runs(EventLoopGroup group) {
            return group instanceof EpollEventLoopGroup;
        }
    }

    /** Every reference to the io_uring classes: loaded only once {@link #IO_URING} is known available. */
    private static final class IoUringClasses {
        static Throwable unavailabilityCause() {
            return IOUring.isAvailable() ? null : IOUring.unavailabilityCause();
        }

        static EventLoopGroup group(int threads, ThreadFactory threadFactory) {
            return new IOUringEventLoopGroup(threads, threadFactory);
        }

        static Class<? extends ServerSocketChannel> serverChannel() {
            return IOUringServerSocketChannel.class;
        }

        static Class<? extends SocketChannel> socketChannel() {
            return IOUringSocketChannel.class;
        }

        static boolean runs(EventLoopGroup group) {
            return group instanceof IOUringEventLoopGroup;
        }
    }
}
