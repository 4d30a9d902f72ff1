package io.ringcast.it;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The last stage of a Dockerfile (the image that runs), read as Docker reads it: comment lines
 * dropped, lines ending in {@code \} joined, one instruction per line. Tests run what it says
 * without Docker, so that they fail when it changes. Only the exec (JSON) form of
 * {@code ENTRYPOINT}, {@code CMD} and {@code HEALTHCHECK CMD} is read.
 *
 * @param instructions the stage's instructions from its {@code FROM} on, each as {@code NAME arguments}
 */
record DockerfileStage(List<String> instructions) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The last stage of {@code dockerfile}. */
    static DockerfileStage runtime(Path dockerfile) {
        List<String> all = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        try {
            for (String raw : Files.readAllLines(dockerfile)) {
                if (raw.strip().startsWith("#")) {
                    continue;
                }
                boolean continued = raw.endsWith("\\");
                line.append(continued ? raw.substring(0, raw.length() - 1) : raw);
                if (!continued) {
                    if (!line.toString().isBlank()) {
                        all.add(line.toString().strip());
                    }
                    line.setLength(0);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int from = 0;
        for (int i = 0; i < all.size(); i++) {
            if (name(all.get(i)).equals("FROM")) {
                from = i;
            }
        }
        return new DockerfileStage(List.copyOf(all.subList(from, all.size())));
    }

    /** The arguments of the last instruction {@code name}, or null. */
    String last(String name) {
        String found = null;
        for (String instruction : instructions) {
            if (name(instruction).equals(name)) {
                found = instruction.substring(name.length()).strip();
            }
        }
        return found;
    }

    /** The arguments of every instruction {@code name}, in order. */
    Stream<String> all(String name) {
        return instructions.stream().filter(i -> name(i).equals(name)).map(i -> i.substring(name.length()).strip());
    }

    /** What the container runs: {@code ENTRYPOINT} followed by {@code CMD}. */
    List<String> command() {
        List<String> command = new ArrayList<>(execForm(last("ENTRYPOINT")));
        String cmd = last("CMD");
        if (cmd != null) {
            command.addAll(execForm(cmd));
        }
        return command;
    }

    /** The command of {@code HEALTHCHECK [--option=value ...] CMD [...]}. */
    List<String> healthCheck() {
        String healthCheck = last("HEALTHCHECK");
        int cmd = healthCheck.indexOf(" CMD ");
        if (cmd < 0) {
            throw new AssertionError("HEALTHCHECK without CMD: " + healthCheck);
        }
        return execForm(healthCheck.substring(cmd + " CMD ".length()));
    }

    /** Where a {@code COPY} of the stage puts the file named {@code fileName}. */
    String copiedTo(String fileName) {
        return all("COPY").map(args -> args.split("\\s+"))
                .map(words -> words[words.length - 1])
                .filter(target -> target.endsWith("/" + fileName))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no COPY of " + fileName + " in " + instructions));
    }

    private static List<String> execForm(String json) {
        try {
            return JSON.readValue(json, new TypeReference<List<String>>() { });
        } catch (IOException e) {
            throw new AssertionError("not the exec form (a JSON array of strings): " + json, e);
        }
    }

    private static String name(String instruction) {
        int space = instruction.indexOf(' ');
        return (space < 0 ? instruction : instruction.substring(0, space)).toUpperCase(java.util.Locale.ROOT);
    }
}
