package io.ringcast.server.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Moves logging off standard output for {@code sub}, {@code pub} and {@code remove}: the jar's
 * {@code logback.xml} is the server's, which logs to standard output, where these commands print
 * their data. Called on the command's thread once its command line is known to be good, before the
 * client starts.
 */
final class CliLogging {
    private CliLogging() {
    }

    /** Logs errors only (or {@code RINGCAST_LOG_LEVEL}) to standard error, from {@code logback-cli.xml}. */
    static void toStandardError() {
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (!(factory instanceof LoggerContext context)) {
            return; // another slf4j binding: its configuration is its own
        }
        context.reset();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        try {
            configurator.doConfigure(CliLogging.class.getResource("logback-cli.xml"));
        } catch (JoranException e) {
            throw new IllegalStateException("the jar's logback-cli.xml does not load", e);
        }
    }
}
