package io.ringcast.server.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The tables of docs/subscription-options.md, read so that tests hold every documented row
 * against the code: a table is found by its header line, and each cell loses its backticks.
 */
final class SubscriptionOptionsDoc {
    private static final Path DOC = Path.of("..", "docs", "subscription-options.md");

    private SubscriptionOptionsDoc() {
    }

    /** The rows of the table whose header is {@code header} (e.g. {@code | filter | message |}), cells unquoted. */
    static List<List<String>> table(String header) {
        List<String> lines;
        try {
            lines = Files.readAllLines(DOC, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int at = lines.indexOf(header);
        if (at < 0) {
            throw new AssertionError("no table '" + header + "' in " + DOC);
        }
        List<List<String>> rows = new ArrayList<>();
        for (int i = at + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String line = lines.get(i);
            List<String> cells = new ArrayList<>();
            for (String cell : line.substring(1, line.length() - 1).split("\\|", -1)) {
                String c = cell.strip();
                if (c.length() >= 2 && c.startsWith("`") && c.endsWith("`")) {
                    c = c.substring(1, c.length() - 1);
                }
                cells.add(c);
            }
            rows.add(cells);
        }
        if (rows.isEmpty()) {
            throw new AssertionError("table '" + header + "' has no rows");
        }
        return rows;
    }
}
