package io.ringcast.protocol;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Reads the hex notation of the golden files and of the example in {@code docs/protocol.md}.
 *
 * <pre>
 * # a comment runs to the end of the line ('#' inside quotes is data)
 * C-&gt;S                    a direction marker starts a new frame (C-&gt;S or S-&gt;C)
 * 01 00000009 0001        hex, any even number of digits per token
 * "demo1"                 the UTF-8 bytes of the quoted text, no length prefix
 * </pre>
 */
final class HexFrames {
    enum Direction { CLIENT_TO_SERVER, SERVER_TO_CLIENT }

    /** One WebSocket frame: who sends it and its bytes as lowercase hex. */
    record Frame(Direction direction, String hex) {
        byte[] bytes() {
            return HexFormat.of().parseHex(hex);
        }
    }

    private HexFrames() {
    }

    static List<Frame> parse(String text, String source) {
        List<Frame> frames = new ArrayList<>();
        Direction direction = null;
        ByteArrayOutputStream current = null;
        int line = 1;
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '\n') {
                line++;
                i++;
            } else if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '#') {
                while (i < text.length() && text.charAt(i) != '\n') {
                    i++;
                }
            } else {
                int start = i;
                byte[] bytes;
                if (c == '"') {
                    int close = text.indexOf('"', i + 1);
                    if (close < 0 || text.substring(i + 1, close).indexOf('\n') >= 0) {
                        throw new IllegalArgumentException(source + ":" + line + ": unclosed quote");
                    }
                    bytes = text.substring(i + 1, close).getBytes(StandardCharsets.UTF_8);
                    i = close + 1;
                } else {
                    while (i < text.length() && !Character.isWhitespace(text.charAt(i)) && text.charAt(i) != '#'
                            && text.charAt(i) != '"') {
                        i++;
                    }
                    String token = text.substring(start, i);
                    if (token.equals("C->S") || token.equals("S->C")) {
                        if (current != null) {
                            frames.add(new Frame(direction, HexFormat.of().formatHex(current.toByteArray())));
                        }
                        direction = token.equals("C->S") ? Direction.CLIENT_TO_SERVER : Direction.SERVER_TO_CLIENT;
                        current = new ByteArrayOutputStream();
                        continue;
                    }
                    if (!token.matches("(?:[0-9A-Fa-f]{2})+")) {
                        throw new IllegalArgumentException(source + ":" + line + ": '" + token
                                + "' is neither hex bytes, a quoted string nor a direction marker");
                    }
                    bytes = HexFormat.of().parseHex(token);
                }
                if (current == null) {
                    throw new IllegalArgumentException(source + ":" + line + ": bytes before the first C->S or S->C");
                }
                current.writeBytes(bytes);
            }
        }
        if (current != null) {
            frames.add(new Frame(direction, HexFormat.of().formatHex(current.toByteArray())));
        }
        return frames;
    }

    /**
     * The frames of the {@code ## Example} block of {@code docs/protocol.md}. A line starts with a
     * direction or, for another message of the same frame, with spaces; its bytes end where two or
     * more spaces introduce the description ("HELLO v1").
     */
    static List<Frame> parseDocExample(String markdown) {
        return parseDocBlock(markdown, "\n## Example");
    }

    /**
     * The frames of the first fenced block after {@code marker} in {@code docs/protocol.md}, in
     * the notation of its {@code ## Example} ({@link #parseDocExample}).
     */
    static List<Frame> parseDocBlock(String markdown, String after) {
        int section = markdown.indexOf(after);
        if (section < 0) {
            throw new IllegalArgumentException("docs/protocol.md has no '" + after.strip() + "'");
        }
        int open = markdown.indexOf("```", section);
        int bodyStart = markdown.indexOf('\n', open) + 1;
        int close = markdown.indexOf("```", bodyStart);
        StringBuilder golden = new StringBuilder();
        int n = 0;
        for (String line : markdown.substring(bodyStart, close).split("\n")) {
            n++;
            if (line.isBlank()) {
                continue;
            }
            String marker = "";
            String rest = line;
            if (line.startsWith("C->S") || line.startsWith("S->C")) {
                marker = line.substring(0, 4);
                rest = line.substring(4);
            } else if (!line.startsWith(" ")) {
                throw new IllegalArgumentException("example line " + n + " starts with neither a direction nor spaces");
            }
            golden.append(marker).append(' ').append(rest.strip().split("\\s{2,}", 2)[0]).append('\n');
        }
        return parse(golden.toString(), "docs/protocol.md example");
    }
}
