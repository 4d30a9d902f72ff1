package io.ringcast.benchmark.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the server's unified GC log, written with {@code -Xlog:gc:file=gc.log:timemillis}: one line
 * per collection pause, e.g.
 * <pre>
 * [1763861234567ms] GC(12) Pause Young (Normal) (G1 Evacuation Pause) 58M->21M(512M) 3.412ms
 * </pre>
 * The figure after the arrow is the heap in use when the pause ended: live data plus whatever
 * garbage the pause did not reclaim. Lines without a heap transition (the concurrent phases, the
 * start-up lines) are skipped. Stateless.
 */
final class GcLog {
    /** One collection pause: wall-clock end, heap in use before and after, committed heap, pause length. */
    record Pause(long epochMs, int gcId, String kind, long beforeBytes, long afterBytes, long committedBytes,
                 double pauseMs) {
    }

    private static final Pattern PAUSE = Pattern.compile(
            "^\\[(\\d+)ms].*?GC\\((\\d+)\\) (.+?) (\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\) ([0-9.]+)ms\\s*$");

    private GcLog() {
    }

    static List<Pause> read(Path file) throws IOException {
        return parse(Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    static List<Pause> parse(List<String> lines) {
        List<Pause> pauses = new ArrayList<>();
        for (String line : lines) {
            Matcher m = PAUSE.matcher(line);
            if (m.matches()) {
                pauses.add(new Pause(Long.parseLong(m.group(1)), Integer.parseInt(m.group(2)), m.group(3),
                        bytes(m.group(4), m.group(5)), bytes(m.group(6), m.group(7)), bytes(m.group(8), m.group(9)),
                        Double.parseDouble(m.group(10))));
            }
        }
        return pauses;
    }

    private static long bytes(String number, String unit) {
        long n = Long.parseLong(number);
        return switch (unit) {
            case "K" -> n << 10;
            case "M" -> n << 20;
            default -> n << 30;
        };
    }
}
