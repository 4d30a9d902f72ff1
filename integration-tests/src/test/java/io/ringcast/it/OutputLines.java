package io.ringcast.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The lines of a process's output stream, read on a daemon thread of their own: {@link #lines} holds
 * those read so far, {@link #all} waits for the stream's end (the process closed it, or ended).
 */
final class OutputLines {
    /** The lines read so far; safe to read from any thread while more come. */
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final CountDownLatch ended = new CountDownLatch(1);

    private OutputLines() {
    }

    /** Starts reading {@code output} as UTF-8 lines. */
    static OutputLines read(InputStream output) {
        OutputLines o = new OutputLines();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(output, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    o.lines.add(line);
                }
            } catch (IOException ignored) {
                // the process ended
            } finally {
                o.ended.countDown();
            }
        }, "process-output");
        t.setDaemon(true);
        t.start();
        return o;
    }

    /** Every line, once the stream ended; fails after {@code timeoutS} seconds. */
    List<String> all(long timeoutS) throws InterruptedException {
        if (!ended.await(timeoutS, TimeUnit.SECONDS)) {
            throw new AssertionError("the output did not end within " + timeoutS + " s; so far: " + lines);
        }
        return lines;
    }
}
