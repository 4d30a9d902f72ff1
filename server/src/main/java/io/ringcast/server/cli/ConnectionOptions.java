package io.ringcast.server.cli;

import io.ringcast.client.RingcastClient;
import io.ringcast.client.RingcastException;
import io.ringcast.protocol.ErrorCode;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.Console;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;

/**
 * What {@code sub}, {@code pub} and {@code remove} share: the server's URL (or a cluster's URLs)
 * and the options of {@link RingcastClient#builder()} a command line needs, logins included.
 * Secrets never come from the command line, where {@code ps} shows them: a password from
 * {@code --password-file}, {@code RINGCAST_PASSWORD} or a prompt, a token from {@code --token-file}.
 * Used on the command's thread only.
 */
final class ConnectionOptions {
    /** Exit status when the server refused: a publish, the subscription, a removal, or the login. */
    static final int EXIT_REFUSED = 4;
    /** Exit status when the server could not be reached, or did not answer in time. */
    static final int EXIT_FAILED = 1;
    /** The environment variable a {@code --user}'s password may come from. */
    static final String PASSWORD_VARIABLE = "RINGCAST_PASSWORD";

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Parameters(index = "0", arity = "1", paramLabel = "URL", split = ",", description = "The server's WebSocket URL, e.g. "
            + "ws://localhost:8080/ws; for a cluster, every node's, separated by commas (tried in turn)")
    List<String> urls;

    @Option(names = {"-u", "--user"}, paramLabel = "NAME", description = "Log in as this principal (the server's "
            + "security.principals). The password is the first line of --password-file, else $" + PASSWORD_VARIABLE
            + ", else asked for on the terminal")
    String user;

    @Option(names = "--password-file", paramLabel = "PATH", description = "With --user: a file whose first line is "
            + "the password")
    Path passwordFile;

    @Option(names = "--token-file", paramLabel = "PATH", description = "Log in with the signed token (JWT) in this file")
    Path tokenFile;

    @Option(names = "--trust", paramLabel = "PEM", description = "For wss:// URLs: trust the CA or server "
            + "certificates in this PEM file instead of the JDK's trust store")
    Path trustedCertificates;

    @Option(names = "--connect-timeout-ms", paramLabel = "MS", defaultValue = "10000", description = "How long to "
            + "keep trying to connect before giving up (default ${DEFAULT-VALUE})")
    long connectTimeoutMs;

    @Option(names = "--client-name", paramLabel = "NAME", defaultValue = "ringcast-cli", description = "The name the "
            + "server logs for this session (default ${DEFAULT-VALUE})")
    String clientName;

    /**
     * A builder with every option applied, or a {@link ParameterException} (exit status 2, with the
     * usage) naming what is wrong: a URL, a file, a missing password, {@code --user} with {@code --token-file}.
     */
    RingcastClient.Builder builder() {
        RingcastClient.Builder builder = RingcastClient.builder();
        try {
            builder.addresses(urls.toArray(new String[0]))
                    .clientName(clientName)
                    .connectTimeout(Duration.ofMillis(connectTimeoutMs));
            if (trustedCertificates != null) {
                builder.trustedCertificates(readable(trustedCertificates, "--trust"));
            }
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
        if (user != null && tokenFile != null) {
            throw usage("--user and --token-file are two ways to log in: give one");
        }
        if (passwordFile != null && user == null) {
            throw usage("--password-file needs --user");
        }
        if (user != null) {
            builder.password(user, password());
        } else if (tokenFile != null) {
            String token = read(tokenFile, "--token-file").strip();
            if (token.isEmpty()) {
                throw usage("--token-file " + tokenFile + " is empty");
            }
            builder.token(token);
        }
        return builder;
    }

    /**
     * Connects {@code client} and returns 0, or prints why it could not and returns the exit status:
     * {@link #EXIT_REFUSED} when the login was refused, {@link #EXIT_FAILED} otherwise.
     */
    static int connect(RingcastClient client, PrintWriter err) throws InterruptedException {
        try {
            client.connect().get();
            return 0;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RingcastException r && r.code() == ErrorCode.AUTHENTICATION_FAILED) {
                err.println("ringcast: login refused: " + r.getMessage());
                return EXIT_REFUSED;
            }
            err.println("ringcast: " + cause.getMessage());
            return EXIT_FAILED;
        }
    }

    /**
     * Says what is wrong with the command line, as the jar's other commands do ({@code ringcast: ...}, no
     * usage: the mistake is in an argument's value, which the usage would bury), and returns status 2.
     */
    static int badCommandLine(ParameterException e, PrintWriter err) {
        err.println("ringcast: " + e.getMessage());
        return CommandLine.ExitCode.USAGE;
    }

    private String password() {
        if (passwordFile != null) {
            String text = read(passwordFile, "--password-file");
            int end = text.indexOf('\n');
            String firstLine = (end < 0 ? text : text.substring(0, end)).replace("\r", "");
            if (firstLine.isEmpty()) {
                throw usage("--password-file " + passwordFile + " has no password on its first line");
            }
            return firstLine;
        }
        String fromEnvironment = System.getenv(PASSWORD_VARIABLE);
        if (fromEnvironment != null && !fromEnvironment.isEmpty()) {
            return fromEnvironment;
        }
        Console console = System.console();
        if (console != null) {
            char[] typed = console.readPassword("password for %s: ", user);
            if (typed != null && typed.length > 0) {
                return new String(typed);
            }
        }
        throw usage("--user " + user + " needs a password: --password-file PATH, $" + PASSWORD_VARIABLE
                + ", or a terminal to type it on");
    }

    private String read(Path file, String option) {
        try {
            return Files.readString(readable(file, option), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw usage(option + ": cannot read " + file + ": " + e.getMessage());
        }
    }

    private Path readable(Path file, String option) {
        if (!Files.isReadable(file)) {
            throw usage(option + ": " + file + " does not exist or is not readable");
        }
        return file;
    }

    private ParameterException usage(String message) {
        return new ParameterException(command.commandLine(), message);
    }
}
