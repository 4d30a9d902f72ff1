package io.ringcast.protocol;

/** Bits of the {@code flags} byte of {@code SNAPSHOT} and {@code UPDATE}. */
public final class UpdateFlags {
    /** A snapshot after updates that could not be replayed: the receiver missed some. */
    public static final int GAP = 0x01;
    /**
     * ({@code UPDATE} only) The value is a {@link Delta} against the topic's previous value, the one
     * of sequence {@code sequence - 1}, which the receiver has.
     */
    public static final int DELTA = 0x02;
    /**
     * ({@code UPDATE} only) Conflated: the server skipped older updates of this topic for this
     * session because it fell behind; the sequence jumps, and this is the newest value.
     */
    public static final int CONFLATED = 0x04;
    /**
     * ({@code SNAPSHOT} with {@link #GAP} only) The topic keeps no value (its last-value cache is
     * off): the value is empty and only says that updates were missed.
     */
    public static final int NO_VALUE = 0x08;
    /**
     * The message comes through a view: a {@code u32 viewId} follows the
     * flags, before the value, and the message is for the subscriptions with that view. The
     * sequence may jump, as with {@link #CONFLATED}: updates the view filtered out, left unchanged
     * or throttled are not sent.
     */
    public static final int VIEWED = 0x10;

    private UpdateFlags() {
    }
}
