package io.ringcast.server.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * The files under {@code web/} on the server's class path, served over plain HTTP: the demo page
 * at {@code /} and the browser client at {@code /js/ringcast.js}. Read once, on first request, and
 * kept in memory (they are a few tens of kilobytes). Any thread.
 */
final class StaticContent {
    /** Plain names only: no {@code ..}, no hidden files, nothing a class path lookup could escape with. */
    private static final Pattern SAFE_PATH = Pattern.compile("(/[A-Za-z0-9_-][A-Za-z0-9._-]*)+");
    private static final Map<String, String> TYPES = Map.of(
            "html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8",
            "mjs", "text/javascript; charset=utf-8",
            "css", "text/css; charset=utf-8",
            "ts", "text/plain; charset=utf-8",
            "json", "application/json",
            "png", "image/png",
            "svg", "image/svg+xml",
            "ico", "image/x-icon");

    /** A file to serve: its bytes, media type and a strong ETag. */
    record File(byte[] bytes, String contentType, String etag) {
    }

    private static final File MISSING = new File(new byte[0], "", "");
    private final ClassLoader loader = StaticContent.class.getClassLoader();
    private final Map<String, File> cache = new ConcurrentHashMap<>();

    /** The file for a request path, or null when there is none. */
    File find(String requestPath) {
        String path = requestPath.equals("/") ? "/index.html" : requestPath;
        if (!SAFE_PATH.matcher(path).matches()) {
            return null;
        }
        File file = cache.computeIfAbsent(path, this::load);
        return file == MISSING ? null : file;
    }

    private File load(String path) {
        int dot = path.lastIndexOf('.');
        String type = dot < 0 ? null : TYPES.get(path.substring(dot + 1));
        if (type == null) {
            return MISSING;
        }
        try (InputStream in = loader.getResourceAsStream("web" + path)) {
            if (in == null) {
                return MISSING;
            }
            byte[] bytes = in.readAllBytes();
            CRC32 crc = new CRC32();
            crc.update(bytes);
            return new File(bytes, type, '"' + Long.toHexString(crc.getValue()) + '-' + bytes.length + '"');
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read web" + path + " from the class path", e);
        }
    }
}
