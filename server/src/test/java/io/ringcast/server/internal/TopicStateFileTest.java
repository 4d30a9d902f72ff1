package io.ringcast.server.internal;

import io.ringcast.protocol.UpdateFlags;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static io.ringcast.server.internal.TopicFixtures.publish;
import static io.ringcast.server.internal.TopicFixtures.publishDelta;
import static io.ringcast.server.internal.TopicFixtures.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link TopicStateFile}: what a graceful stop writes is what the next start reads (sequences,
 * history with flags, newest values, any path), and a damaged file is refused with an
 * {@link IOException} saying what is wrong, never taken half or answered with another exception.
 */
class TopicStateFileTest {
    private static final int MAGIC = 0x52435354;

    @TempDir
    Path dir;
    private final List<Topic> topics = new ArrayList<>();

    @AfterEach
    void releaseHistories() {
        topics.forEach(Topic::releaseHistory);
    }

    private Topic topic(String path, int historyLength) {
        Topic t = TopicFixtures.topic(topics.size() + 1, path, historyLength);
        topics.add(t);
        return t;
    }

    /** A file holding: a topic past its history, a unicode path whose newest update is a delta, a topic without values. */
    private Path savedFile() throws IOException {
        Topic fx = topic("fx/EURUSD", 3);
        for (int i = 1; i <= 5; i++) {
            publish(fx, "1.084" + i);
        }
        Topic unicode = topic("news/日本語/🚀 launch", 4);
        publish(unicode, "{\"title\":\"été\"}");
        publishDelta(unicode, new byte[]{0, (byte) 0xFF, 7}, "{\"title\":\"hiver ❄\"}");
        Topic uncached = topic("events/login", 4);
        uncached.features(TopicFixtures.UNCACHED);
        uncached.sequence = 42;

        Path file = dir.resolve("state.bin");
        assertThat(TopicStateFile.write(file, topics)).isEqualTo(3);
        return file;
    }

    @Test
    void writtenTopicsReadBackWithSequencesHistoryFlagsAndNewestValues() throws IOException {
        List<TopicStateFile.SavedTopic> saved = TopicStateFile.read(savedFile());

        assertThat(saved).extracting(TopicStateFile.SavedTopic::path)
                .containsExactly("fx/EURUSD", "news/日本語/🚀 launch", "events/login");

        TopicStateFile.SavedTopic fx = saved.get(0);
        assertThat(fx.sequence()).isEqualTo(5);
        assertThat(fx.history()).extracting(TopicStateFile.Entry::sequence).containsExactly(3L, 4L, 5L);
        assertThat(fx.history()).extracting(e -> new String(e.payload(), StandardCharsets.UTF_8))
                .containsExactly("1.0843", "1.0844", "1.0845");
        assertThat(fx.history()).extracting(TopicStateFile.Entry::flags).containsOnly(0);
        assertThat(new String(fx.lastValue(), StandardCharsets.UTF_8)).isEqualTo("1.0845");

        TopicStateFile.SavedTopic unicode = saved.get(1);
        assertThat(unicode.sequence()).isEqualTo(2);
        assertThat(unicode.history()).extracting(TopicStateFile.Entry::flags).containsExactly(0, UpdateFlags.DELTA);
        assertThat(unicode.history().get(1).payload()).as("the delta as sent").containsExactly(0, 0xFF, 7);
        assertThat(new String(unicode.lastValue(), StandardCharsets.UTF_8)).as("the full value, not the delta")
                .isEqualTo("{\"title\":\"hiver ❄\"}");

        TopicStateFile.SavedTopic uncached = saved.get(2);
        assertThat(uncached.sequence()).isEqualTo(42);
        assertThat(uncached.history()).isEmpty();
        assertThat(uncached.lastValue()).isNull();
    }

    /** The cluster's snapshots carry the same format in memory: the file is its bytes, nothing more. */
    @Test
    void theFormatInMemoryIsTheFilesBytesAndReadsBackAlike() throws IOException {
        Path file = savedFile();
        ByteArrayOutputStream memory = new ByteArrayOutputStream();
        assertThat(TopicStateFile.writeTo(new DataOutputStream(memory), topics)).isEqualTo(3);

        byte[] bytes = memory.toByteArray();
        assertThat(bytes).isEqualTo(Files.readAllBytes(file));
        List<TopicStateFile.SavedTopic> fromMemory = TopicStateFile.readFrom(
                new DataInputStream(new ByteArrayInputStream(bytes)), bytes.length);
        assertThat(fromMemory).usingRecursiveFieldByFieldElementComparator().isEqualTo(TopicStateFile.read(file));
    }

    @Test
    void noTopicsIsAFileToo() throws IOException {
        Path file = dir.resolve("empty.bin");
        assertThat(TopicStateFile.write(file, List.of())).isZero();

        assertThat(TopicStateFile.read(file)).isEmpty();
    }

    @Test
    void writeReplacesAnOlderFileWholeAndLeavesNoTemporaryFile() throws IOException {
        Path file = dir.resolve("state.bin");
        Files.write(file, new byte[100_000]);

        TopicStateFile.write(file, List.of(topic("a", 2)));

        assertThat(TopicStateFile.read(file)).extracting(TopicStateFile.SavedTopic::path).containsExactly("a");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files).containsExactly(file);
        }
    }

    @Test
    void writeCreatesMissingDirectories() throws IOException {
        Path file = dir.resolve("var/lib/ringcast/state.bin");

        TopicStateFile.write(file, List.of(topic("a", 2)));

        assertThat(TopicStateFile.read(file)).hasSize(1);
    }

    @Test
    void fileOfAnotherKindIsRefusedForItsMagicNumber() throws IOException {
        Path file = dir.resolve("state.bin");
        Files.writeString(file, "server:\n  port: 8080\n");

        assertThatThrownBy(() -> TopicStateFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage("not a Ringcast state file (bad magic number)");
    }

    @Test
    void aFileOfVersion1IsReadWithIncarnationsNotKnown() throws IOException {
        Path file = dir.resolve("v1.bin");
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        out.writeInt(MAGIC);
        out.writeInt(1);
        out.writeInt(1);
        out.writeUTF("fx/EURUSD");
        out.writeLong(42);
        out.writeInt(0);
        out.writeInt(-1);
        Files.write(file, bytes.toByteArray());

        TopicStateFile.SavedTopic t = TopicStateFile.read(file).get(0);
        assertThat(t.path()).isEqualTo("fx/EURUSD");
        assertThat(t.sequence()).isEqualTo(42);
        assertThat(t.incarnation()).as("not known: the restore gives a new one").isZero();
    }

    @Test
    void otherVersionIsRefusedNamingBothVersions() throws IOException {
        Path file = dir.resolve("state.bin");
        Files.write(file, ByteBuffer.allocate(12).putInt(MAGIC).putInt(3).putInt(0).array());

        assertThatThrownBy(() -> TopicStateFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage("state file version 3, this server reads versions 1 and 2");
    }

    @Test
    void fileCutAnywhereIsRefusedAsTruncated() throws IOException {
        byte[] whole = Files.readAllBytes(savedFile());
        Path cut = dir.resolve("cut.bin");
        for (int length = 0; length < whole.length; length++) {
            Files.write(cut, Arrays.copyOf(whole, length));
            int at = length;
            assertThatThrownBy(() -> TopicStateFile.read(cut)).as("cut at %d of %d bytes", at, whole.length)
                    .isInstanceOf(IOException.class).hasMessageContaining("truncated");
        }
    }

    @Test
    void bytesAfterTheLastTopicAreRefused() throws IOException {
        Path file = savedFile();
        Files.write(file, new byte[]{0}, java.nio.file.StandardOpenOption.APPEND);

        assertThatThrownBy(() -> TopicStateFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage("bytes left after the last topic");
    }

    /** Writes a file by the format's rules with whatever values a test needs, valid or not. */
    private Path handWritten(FileBody body) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(1);
            body.write(out);
        }
        Path file = dir.resolve("hand.bin");
        Files.write(file, bytes.toByteArray());
        return file;
    }

    private interface FileBody {
        void write(DataOutputStream out) throws IOException;
    }

    /** The file's only topic, up to its history entries. */
    private static void oneTopic(DataOutputStream out, String path, long sequence, int entries) throws IOException {
        out.writeInt(1);
        out.writeUTF(path);
        out.writeLong(sequence);
        out.writeInt(entries);
    }

    /** A history entry up to its payload, which claims {@code length} bytes. */
    private static void entryHead(DataOutputStream out, long sequence, int length) throws IOException {
        out.writeLong(sequence);
        out.writeByte(0);
        out.writeInt(length);
    }

    private static void entry(DataOutputStream out, long sequence, byte[] payload) throws IOException {
        entryHead(out, sequence, payload.length);
        out.write(payload);
    }

    @Test
    void historyWithAHoleIsRefusedNamingTheTopicAndTheEntry() throws IOException {
        Path file = handWritten(out -> {
            oneTopic(out, "fx/EURUSD", 9, 2);
            entry(out, 7, utf8("a")); // should be 8: the history ends at the topic's sequence
            entry(out, 9, utf8("b"));
            out.writeInt(1);
            out.write(utf8("b"));
        });

        assertThatThrownBy(() -> TopicStateFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage("topic fx/EURUSD: history entry 0 has sequence 7, expected 8");
    }

    @Test
    void historyWithoutANewestValueIsRefused() throws IOException {
        Path file = handWritten(out -> {
            oneTopic(out, "fx/EURUSD", 1, 1);
            entry(out, 1, utf8("a"));
            out.writeInt(-1);
        });

        assertThatThrownBy(() -> TopicStateFile.read(file)).isInstanceOf(IOException.class)
                .hasMessage("topic fx/EURUSD has history but no last value");
    }

    @Test
    void negativeCountsAreRefusedNamingWhatIsCounted() throws IOException {
        Path negativeTopics = handWritten(out -> out.writeInt(-1));
        assertThatThrownBy(() -> TopicStateFile.read(negativeTopics)).isInstanceOf(IOException.class)
                .hasMessage("negative topic count: -1");

        Path negativeLength = handWritten(out -> {
            oneTopic(out, "a/b", 1, 1);
            entryHead(out, 1, -5);
        });
        assertThatThrownBy(() -> TopicStateFile.read(negativeLength)).isInstanceOf(IOException.class)
                .hasMessage("negative value length in a/b: -5");
    }

    /** A damaged length must not make the server allocate what it claims: the file cannot hold more than its size. */
    @Test
    void lengthsLongerThanTheFileAreRefusedBeforeAnythingIsAllocated() throws IOException {
        Path longValue = handWritten(out -> {
            oneTopic(out, "a/b", 1, 1);
            entryHead(out, 1, Integer.MAX_VALUE - 16);
            out.write(utf8("abc"));
        });
        assertThatThrownBy(() -> TopicStateFile.read(longValue)).isInstanceOf(IOException.class)
                .hasMessage("truncated: value length in a/b is 2147483631 bytes, more than the input holds");

        Path longLastValue = handWritten(out -> {
            oneTopic(out, "a/b", 0, 0);
            out.writeInt(Integer.MAX_VALUE);
        });
        assertThatThrownBy(() -> TopicStateFile.read(longLastValue)).isInstanceOf(IOException.class)
                .hasMessage("truncated: last value length in a/b is 2147483647 bytes, more than the input holds");
    }
}
