package io.ringcast.protocol;

/** Bits of the {@code flags} byte of {@code SNAPSHOT} and {@code UPDATE}. */
public final class UpdateFlags {
    /** A snapshot after updates that could not be replayed: the receiver missed some. */
    public static final int GAP = 0x01;

    private UpdateFlags() {
    }
}
