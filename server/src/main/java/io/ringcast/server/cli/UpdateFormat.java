package io.ringcast.server.cli;

/** The line {@code sub} prints for each update and each removal: {@link UpdateLines} writes them. */
enum UpdateFormat {
    /**
     * {@code TOPIC SEQUENCE VALUE}, separated by one space (a topic path has no whitespace); in the
     * utf8 value encoding, backslash, line breaks, tabs and other control characters are escaped
     * ({@code \\}, {@code \n}, {@code \r}, {@code \t}, {@code \}{@code u00XX}) so that an update is one line.
     * A removal: {@code TOPIC removed after LASTSEQUENCE}.
     */
    TEXT,
    /**
     * One JSON object a line: {@code {"topic":..,"sequence":..,"kind":..,"value":..}}; a removal's has
     * {@code "kind":"REMOVED"}, its last sequence, and no value.
     */
    JSON;

    /** Its name on the command line. */
    @Override
    public String toString() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
