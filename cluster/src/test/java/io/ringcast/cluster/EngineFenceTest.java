package io.ringcast.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Each consensus engine is fenced in one package (issue 28, item 4): only the sources of
 * {@code io.ringcast.cluster.internal.jgroups} import JGroups or jgroups-raft, and only those of
 * {@code io.ringcast.cluster.internal.ratis} import Apache Ratis, so that the rest of the cluster
 * (the topic log, the ledgers, the batcher, the node) is engine-free and an engine can be changed
 * or dropped in one place. Read from the module's sources (the test's working directory).
 */
class EngineFenceTest {
    private static final Path SOURCES = Path.of("src", "main", "java");
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)", Pattern.MULTILINE);
    /** An engine's package prefix, and the one package of ours allowed to import it. */
    private static final Map<String, String> FENCES = Map.of(
            "org.jgroups.", "io/ringcast/cluster/internal/jgroups",
            "org.apache.ratis.", "io/ringcast/cluster/internal/ratis");

    @Test
    void onlyEachEnginesOwnPackageImportsIt() throws IOException {
        Map<String, List<String>> outside = new TreeMap<>();
        int files = 0;
        try (Stream<Path> sources = Files.walk(SOURCES)) {
            for (Path file : sources.filter(p -> p.toString().endsWith(".java")).toList()) {
                files++;
                String dir = SOURCES.relativize(file.getParent()).toString().replace('\\', '/');
                for (String imported : importsOf(file)) {
                    FENCES.forEach((engine, home) -> {
                        if (imported.startsWith(engine) && !dir.equals(home)) {
                            outside.computeIfAbsent(file.toString(), k -> new ArrayList<>()).add(imported);
                        }
                    });
                }
            }
        }
        assertThat(files).as("the scan read the module's sources").isGreaterThan(30);
        assertThat(outside).as("engine imports outside the engine's package").isEmpty();
    }

    @Test
    void eachEnginesPackageImportsItsEngine() throws IOException {
        for (Map.Entry<String, String> fence : FENCES.entrySet()) {
            try (Stream<Path> sources = Files.list(SOURCES.resolve(fence.getValue()))) {
                boolean importsIt = sources.filter(p -> p.toString().endsWith(".java"))
                        .anyMatch(p -> importsOf(p).stream().anyMatch(i -> i.startsWith(fence.getKey())));
                assertThat(importsIt)
                        .as(fence.getValue() + " imports " + fence.getKey() + "*: the fence is where the engine is")
                        .isTrue();
            }
        }
    }

    /** What {@code file} imports, static imports' classes included. */
    private static List<String> importsOf(Path file) {
        try {
            Matcher m = IMPORT.matcher(Files.readString(file, StandardCharsets.UTF_8));
            List<String> imports = new ArrayList<>();
            while (m.find()) {
                imports.add(m.group(1));
            }
            return imports;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
