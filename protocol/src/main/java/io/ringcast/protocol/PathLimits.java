package io.ringcast.protocol;

/**
 * Limits on topic paths and selectors.
 *
 * @param maxPathBytes  the most UTF-8 bytes in a path or selector
 * @param maxPathDepth  the most segments in a path or selector
 */
public record PathLimits(int maxPathBytes, int maxPathDepth) {
    /** The server's defaults: 256 bytes, 16 segments. */
    public static final PathLimits DEFAULT = new PathLimits(256, 16);
    /** What the wire can carry: a {@code u16} length. For checking syntax where a server's own limits do not apply. */
    public static final PathLimits WIDEST = new PathLimits(65535, 1024);

    public PathLimits {
        if (maxPathBytes < 1 || maxPathBytes > 65535) {
            throw new IllegalArgumentException("maxPathBytes must be 1..65535, was " + maxPathBytes);
        }
        if (maxPathDepth < 1) {
            throw new IllegalArgumentException("maxPathDepth must be >= 1, was " + maxPathDepth);
        }
    }
}
