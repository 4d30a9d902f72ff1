package io.ringcast.protocol;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ErrorCode} is the table of the protocol's errors; the browser client and the protocol
 * document keep copies that must say the same (names, codes, which are fatal, close codes).
 * Each copy is parsed from its file and held against the enum, row for row.
 */
class ErrorCodeTablesTest {
    private static final Path ROOT = Path.of("..");

    /** Each error as {@code NAME code fatal closeCode}, in the enum's order. */
    private static List<String> javaRows(boolean withFatality) {
        return Arrays.stream(ErrorCode.values())
                .map(e -> e.name() + " " + e.code() + (withFatality ? " " + e.fatal() + " " + e.closeCode() : ""))
                .toList();
    }

    /** Each match of {@code row} in {@code file}, as {@code toRow} writes it. */
    private static List<String> rows(Path file, Pattern row, Function<MatchResult, String> toRow) throws IOException {
        String text = Files.readString(ROOT.resolve(file));
        return row.matcher(text).results().map(toRow).toList();
    }

    @Test
    void theBrowserClientsTableMatchesErrorCode() throws IOException {
        // a row of its ERRORS table: `    NAME: [code, fatal, closeCode],`
        Pattern row = Pattern.compile("^ {4}([A-Z_]+): \\[(\\d+), (true|false), (\\d+)],$", Pattern.MULTILINE);
        assertThat(rows(Path.of("client-js", "src", "ringcast.js"), row,
                m -> m.group(1) + " " + m.group(2) + " " + m.group(3) + " " + m.group(4)))
                .containsExactlyElementsOf(javaRows(true));
    }

    @Test
    void theBrowserClientsTypeDeclarationsMatchErrorCode() throws IOException {
        // `    NAME: code;` in `export declare const ErrorCode`, the only declarations of that shape
        Pattern row = Pattern.compile("^ {4}([A-Z_]+): (\\d+);$", Pattern.MULTILINE);
        assertThat(rows(Path.of("client-js", "src", "ringcast.d.ts"), row, m -> m.group(1) + " " + m.group(2)))
                .containsExactlyElementsOf(javaRows(false));
    }

    @Test
    void theProtocolDocumentsTableMatchesErrorCode() throws IOException {
        // | 1 | `MALFORMED_FRAME` | yes | 1002 protocol error | when |   or   | 20 | `INVALID_PATH` | no | | when |
        Pattern row = Pattern.compile("^\\| (\\d+) \\| `([A-Z_]+)` \\| (yes|no) \\| (\\d*)", Pattern.MULTILINE);
        assertThat(rows(Path.of("docs", "protocol.md"), row, m -> m.group(2) + " " + m.group(1) + " "
                + m.group(3).equals("yes") + " " + (m.group(4).isEmpty() ? "0" : m.group(4))))
                .containsExactlyElementsOf(javaRows(true));
    }
}
