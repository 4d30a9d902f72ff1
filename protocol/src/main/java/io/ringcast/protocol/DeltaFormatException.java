package io.ringcast.protocol;

/**
 * A delta that cannot be applied: truncated, inconsistent with its base, or failing its checksum.
 * The reason names what was wrong. A receiver never delivers a value from such a delta.
 */
public final class DeltaFormatException extends Exception {
    private static final long serialVersionUID = 1L;

    /** {@code reason} names what is wrong with the delta. */
    public DeltaFormatException(String reason) {
        super(reason, null, false, false);
    }
}
