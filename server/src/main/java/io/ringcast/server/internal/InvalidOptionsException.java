package io.ringcast.server.internal;

/**
 * A subscription option that cannot be used: the {@code fields} list or the {@code filter} text a
 * client sent breaks a rule of docs/subscription-options.md. The message is for the client as it is
 * (the server will send it with {@code ERROR INVALID_OPTIONS}): the option, then what was wrong and
 * where, e.g. {@code filter: expected a comparison operator after 'spread' at column 8}.
 *
 * <p>No stack trace: a client can send bad options as often as it likes, and the trace would say
 * nothing the message does not.
 */
final class InvalidOptionsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    static final String FIELDS = "fields";
    static final String FILTER = "filter";

    private final String option;

    /**
     * @param option {@link #FIELDS} or {@link #FILTER}
     * @param detail what was wrong and where, without the option's name
     */
    InvalidOptionsException(String option, String detail) {
        super(option + ": " + detail, null, false, false);
        this.option = option;
    }

    /** The option that was wrong: {@code "fields"} or {@code "filter"}. */
    String option() {
        return option;
    }

    /** Longest text a message repeats; longer is cut, with "..." after it. */
    static final int QUOTED_CHARS = 40;

    /** {@code text} in single quotes for a message, cut to {@link #QUOTED_CHARS} characters. */
    static String quote(String text) {
        if (text.length() <= QUOTED_CHARS) {
            return "'" + text + "'";
        }
        int cut = Character.isHighSurrogate(text.charAt(QUOTED_CHARS - 1)) ? QUOTED_CHARS - 1 : QUOTED_CHARS;
        return "'" + text.substring(0, cut) + "...'";
    }

    /** One character for a message: {@code '<'} when it shows, {@code U+0009} when it does not. */
    static String describe(int codePoint) {
        if (Character.isWhitespace(codePoint) || Character.isISOControl(codePoint) || Character.isSpaceChar(codePoint)
                || Character.getType(codePoint) == Character.FORMAT) {
            return String.format("U+%04X", codePoint);
        }
        return "'" + new String(Character.toChars(codePoint)) + "'";
    }
}
