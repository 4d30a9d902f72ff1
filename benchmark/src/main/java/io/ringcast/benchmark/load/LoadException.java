package io.ringcast.benchmark.load;

/** A run could not be carried out: a server was unreachable, a subscription refused. Exit code 3. */
final class LoadException extends Exception {
    private static final long serialVersionUID = 1L;

    LoadException(String message, Throwable cause) {
        super(message, cause);
    }

    LoadException(String message) {
        super(message);
    }

    /** An exception said for a reader, in a load exception's message: its class and its message. */
    static String describe(Throwable cause) {
        String message = cause.getMessage();
        return message == null || message.isEmpty() ? cause.getClass().getSimpleName()
                : cause.getClass().getSimpleName() + ": " + message;
    }
}
