package io.ringcast.cluster.internal;

import io.ringcast.log.PublishResult;

import java.util.List;

/**
 * The answer of a group's log to one entry, decoded by the node that submitted it
 * ({@link TopicLogCodec#decodeResponse}): either the entry's ordinal and one result per publish of
 * the entry, in the entry's order, or a refusal of the whole entry (it was malformed; nothing of it
 * was applied).
 *
 * @param ordinal the entry's place among the entries the log applied ({@link TopicLog#appliedEntries}
 *                once it is applied, on every node); 0 when refused
 * @param results one per publish, in order; empty when refused
 * @param refusal why the entry was refused, or null
 */
record EntryResponse(long ordinal, List<PublishResult> results, String refusal) {

    public EntryResponse {
        results = List.copyOf(results);
    }

    public static EntryResponse refused(String why) {
        return new EntryResponse(0, List.of(), why);
    }

    public boolean isRefused() {
        return refusal != null;
    }
}
