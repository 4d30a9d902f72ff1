package io.ringcast.server.internal;

import java.lang.reflect.Proxy;

/**
 * Makes SIGTERM and Ctrl-C (SIGINT) the normal way to stop a process of the jar: {@code System.exit(0)}
 * on the signal, so the shutdown hooks run and the status is 0, not the JVM's 143/130, which a plain
 * systemd unit or a script would count as a failure. Used by {@code Main} for a node and by the
 * {@code sub} command. Any thread; install once per signal.
 */
public final class SignalExit {
    private SignalExit() {
    }

    /**
     * Exits 0 on {@code SIG<signalName>} ({@code "TERM"}, {@code "INT"}), through {@code sun.misc.Signal}
     * (module jdk.unsupported, kept for this use) reached reflectively: javac warns of every mention of it
     * with a warning no {@code @SuppressWarnings} silences, and the build fails on warnings.
     */
    public static void exitZeroOn(String signalName) {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Object handler = Proxy.newProxyInstance(SignalExit.class.getClassLoader(), new Class<?>[] {handlerType},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "handle" -> {
                            System.exit(0);
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> "exit 0 on SIG" + signalName;
                    });
            signal.getMethod("handle", signal, handlerType)
                    .invoke(null, signal.getConstructor(String.class).newInstance(signalName), handler);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot handle SIG" + signalName, e);
        }
    }
}
