package io.ringcast.cluster.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which member owns and which backs up each partition, computed from the members alone, so every
 * node derives the same table from the same view without a coordinator: rendezvous (highest
 * random weight) hashing, where the owner is the member with the highest score for the partition
 * and the backup the second. When a member leaves, only its partitions move (each to its backup);
 * when one joins, it takes only the partitions where it scores highest.
 *
 * <p>Thread safety: immutable.
 */
public final class PartitionTable {
    private final List<String> members;
    private final String[] owners;
    private final String[] backups;

    /** @param members the names in a view, in any order */
    public PartitionTable(List<String> members, int partitions) {
        List<String> sorted = new ArrayList<>(members);
        sorted.sort(null);
        this.members = List.copyOf(sorted);
        this.owners = new String[partitions];
        this.backups = new String[partitions];
        long[] memberHashes = new long[sorted.size()];
        for (int i = 0; i < memberHashes.length; i++) {
            memberHashes[i] = hash64(sorted.get(i).getBytes(StandardCharsets.UTF_8));
        }
        for (int p = 0; p < partitions; p++) {
            int best = -1;
            int second = -1;
            long bestScore = 0;
            long secondScore = 0;
            for (int i = 0; i < memberHashes.length; i++) {
                long score = mix(memberHashes[i] ^ (p * 0x9E3779B97F4A7C15L));
                if (best < 0 || Long.compareUnsigned(score, bestScore) > 0) {
                    second = best;
                    secondScore = bestScore;
                    best = i;
                    bestScore = score;
                } else if (second < 0 || Long.compareUnsigned(score, secondScore) > 0) {
                    second = i;
                    secondScore = score;
                }
            }
            owners[p] = best < 0 ? null : sorted.get(best);
            backups[p] = second < 0 ? null : sorted.get(second);
        }
    }

    /**
     * The partition of a topic: a 64-bit hash of the path's UTF-8 bytes (FNV-1a, finished with the
     * SplitMix64 mixer), modulo the partition count. Fixed by this definition, so the same on every
     * node and every run.
     */
    public static int partitionOf(String topicPath, int partitions) {
        return (int) Long.remainderUnsigned(hash64(topicPath.getBytes(StandardCharsets.UTF_8)), partitions);
    }

    public int partitions() {
        return owners.length;
    }

    /** The members, sorted. */
    public List<String> members() {
        return members;
    }

    /** The member that sequences {@code partition}; null only for an empty table. */
    public String owner(int partition) {
        return owners[partition];
    }

    /** The member that holds every update of {@code partition} before it is acked; null with one member. */
    public String backup(int partition) {
        return backups[partition];
    }

    /** The partitions {@code member} owns, ascending. */
    public int[] ownedBy(String member) {
        return select(owners, member);
    }

    /** The partitions {@code member} backs up, ascending. */
    public int[] backedUpBy(String member) {
        return select(backups, member);
    }

    private static int[] select(String[] byPartition, String member) {
        int[] found = new int[byPartition.length];
        int n = 0;
        for (int p = 0; p < byPartition.length; p++) {
            if (member.equals(byPartition[p])) {
                found[n++] = p;
            }
        }
        return Arrays.copyOf(found, n);
    }

    private static long hash64(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return mix(h);
    }

    /** SplitMix64's finalizer: every input bit affects every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
