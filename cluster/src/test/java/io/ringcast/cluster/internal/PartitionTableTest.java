package io.ringcast.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

class PartitionTableTest {
    private static final int PARTITIONS = 271;
    /** The names of the shipped five-node config (config/cluster/node-*.yaml). */
    private static final List<String> FIVE = List.of("node-1", "node-2", "node-3", "node-4", "node-5");

    @Test
    void everyMemberOrderGivesTheSameTable() {
        PartitionTable reference = new PartitionTable(FIVE, PARTITIONS);
        Random random = new Random(42);
        for (int shuffle = 0; shuffle < 20; shuffle++) {
            List<String> shuffled = new ArrayList<>(FIVE);
            Collections.shuffle(shuffled, random);
            PartitionTable table = new PartitionTable(shuffled, PARTITIONS);

            assertThat(table.members()).as("members of " + shuffled).isEqualTo(FIVE);
            for (int p = 0; p < PARTITIONS; p++) {
                assertThat(table.owner(p)).as("owner of " + p + " from " + shuffled).isEqualTo(reference.owner(p));
                assertThat(table.backup(p)).as("backup of " + p + " from " + shuffled).isEqualTo(reference.backup(p));
            }
        }
    }

    @Test
    void ownerAndBackupAreTwoDifferentMembers() {
        PartitionTable table = new PartitionTable(FIVE, PARTITIONS);
        assertThat(table.partitions()).isEqualTo(PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(table.owner(p)).isIn(FIVE);
            assertThat(table.backup(p)).isIn(FIVE).isNotEqualTo(table.owner(p));
        }
    }

    @Test
    void aLoneMemberOwnsEverythingWithoutBackup() {
        PartitionTable table = new PartitionTable(List.of("node-1"), PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            assertThat(table.owner(p)).isEqualTo("node-1");
            assertThat(table.backup(p)).isNull();
        }
        assertThat(table.ownedBy("node-1")).hasSize(PARTITIONS);
        assertThat(table.backedUpBy("node-1")).isEmpty();
    }

    @Test
    void ownershipAndBackupsAreSpreadEvenly() {
        // a fair share is 271 / 5 = 54.2 partitions; 35..75 is about three standard deviations
        PartitionTable table = new PartitionTable(FIVE, PARTITIONS);
        for (String member : FIVE) {
            assertThat(table.ownedBy(member).length).as(member + " owns").isBetween(35, 75);
            assertThat(table.backedUpBy(member).length).as(member + " backs up").isBetween(35, 75);
        }
    }

    @Test
    void ownedByAndBackedUpByListAscendingWhatOwnerAndBackupSay() {
        PartitionTable table = new PartitionTable(FIVE, PARTITIONS);
        int owned = 0;
        int backedUp = 0;
        for (String member : FIVE) {
            int[] mine = table.ownedBy(member);
            int[] backups = table.backedUpBy(member);
            assertThat(mine).isSorted().doesNotHaveDuplicates();
            assertThat(backups).isSorted().doesNotHaveDuplicates();
            assertThat(mine).containsExactly(
                    IntStream.range(0, PARTITIONS).filter(p -> table.owner(p).equals(member)).toArray());
            assertThat(backups).containsExactly(
                    IntStream.range(0, PARTITIONS).filter(p -> table.backup(p).equals(member)).toArray());
            owned += mine.length;
            backedUp += backups.length;
        }
        assertThat(owned).isEqualTo(PARTITIONS);
        assertThat(backedUp).isEqualTo(PARTITIONS);
        assertThat(table.ownedBy("not-a-member")).isEmpty();
    }

    @Test
    void aLeavingMembersPartitionsGoToTheirBackupsAndNoOtherPartitionMoves() {
        PartitionTable before = new PartitionTable(FIVE, PARTITIONS);
        for (String leaving : FIVE) {
            List<String> rest = new ArrayList<>(FIVE);
            rest.remove(leaving);
            PartitionTable after = new PartitionTable(rest, PARTITIONS);
            for (int p = 0; p < PARTITIONS; p++) {
                String expected = before.owner(p).equals(leaving) ? before.backup(p) : before.owner(p);
                assertThat(after.owner(p)).as("owner of " + p + " after " + leaving + " left").isEqualTo(expected);
            }
        }
    }

    @Test
    void aJoiningMemberTakesOnlyThePartitionsItNowOwns() {
        List<String> four = FIVE.subList(0, 4);
        PartitionTable before = new PartitionTable(four, PARTITIONS);
        PartitionTable after = new PartitionTable(FIVE, PARTITIONS);
        int taken = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            if (after.owner(p).equals("node-5")) {
                taken++;
            } else {
                assertThat(after.owner(p)).as("owner of " + p + " after node-5 joined").isEqualTo(before.owner(p));
            }
        }
        assertThat(taken).isEqualTo(after.ownedBy("node-5").length).isPositive();
    }

    @Test
    void partitionOfIsPinnedByItsDefinition() {
        // FNV-1a 64 over the UTF-8 bytes, SplitMix64 finalizer, unsigned remainder: these values must
        // never change, or nodes of different versions would disagree on where a topic lives
        assertThat(PartitionTable.partitionOf("", 271)).isEqualTo(31);
        assertThat(PartitionTable.partitionOf("a", 271)).isEqualTo(84);
        assertThat(PartitionTable.partitionOf("b/0", 271)).isEqualTo(83);
        assertThat(PartitionTable.partitionOf("fx/EURUSD", 271)).isEqualTo(119);
        assertThat(PartitionTable.partitionOf("sport/football/scores", 271)).isEqualTo(213);
        assertThat(PartitionTable.partitionOf("ünïcode", 271)).isEqualTo(119);
        assertThat(PartitionTable.partitionOf("fx/EURUSD", 16)).isEqualTo(14);
        assertThat(PartitionTable.partitionOf("ünïcode", 16)).isEqualTo(15);
    }

    @Test
    void partitionOfIsAlwaysWithinRange() {
        Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            String path = "topic/" + Long.toHexString(random.nextLong()) + "/" + i;
            int partitions = 1 + random.nextInt(1024);
            assertThat(PartitionTable.partitionOf(path, partitions)).isBetween(0, partitions - 1);
        }
        assertThat(PartitionTable.partitionOf("anything", 1)).isZero();
        assertThat(PartitionTable.partitionOf("anything", Integer.MAX_VALUE)).isNotNegative();
    }
}
