package io.ringcast.cluster.internal;

import java.util.List;

/**
 * The answer of a group's log to one entry, decoded by the node that submitted it
 * ({@link TopicLogCodec#decodeResponse}): either one result per publish of the entry, in the
 * entry's order, or a refusal of the whole entry (it was malformed; nothing of it was applied).
 *
 * @param results one per publish, in order; empty when refused
 * @param refusal why the entry was refused, or null
 */
record EntryResponse(List<PublishResult> results, String refusal) {

    public EntryResponse {
        results = List.copyOf(results);
    }

    public static EntryResponse refused(String why) {
        return new EntryResponse(List.of(), why);
    }

    public boolean isRefused() {
        return refusal != null;
    }
}
