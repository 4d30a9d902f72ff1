package io.ringcast.log;

/**
 * Why a publish the rules did not apply was refused, in words that name the publish and the bound
 * involved: one text per outcome, for a single node and a cluster alike. Which protocol error
 * carries it is the server's to say.
 */
public final class PublishRefusals {
    private final int maxTopics;
    private final int maxLedgers;
    private final int maxLedgersPerPrincipal;

    /**
     * @param maxTopics              {@code limits.maxTopics}
     * @param maxLedgers             {@code limits.publisherLedgers}
     * @param maxLedgersPerPrincipal {@code limits.publisherLedgersPerPrincipal}
     */
    public PublishRefusals(int maxTopics, int maxLedgers, int maxLedgersPerPrincipal) {
        this.maxTopics = maxTopics;
        this.maxLedgers = maxLedgers;
        this.maxLedgersPerPrincipal = maxLedgersPerPrincipal;
    }

    /**
     * The text for a publish of correlation id {@code correlationId} to {@code path} that was
     * decided {@code result}, which is not acked ({@link PublishResult#acked()} false).
     */
    public String text(PublishResult result, int correlationId, String path) {
        return switch (result.outcome()) {
            case CONFLICT -> "publish " + Integer.toUnsignedString(correlationId) + " to '" + path + "' refused: this "
                    + "publisher's correlation id " + Integer.toUnsignedString(correlationId) + " was first published to '"
                    + result.firstPath() + "'; not applied";
            case OUTCOME_UNKNOWN -> "whether publish " + Integer.toUnsignedString(correlationId) + " to '" + path
                    + "' was applied is no longer known: its publisher's ledger was forgotten (a restart, or past "
                    + "limits.publisherLedgers = " + maxLedgers + " / limits.publisherLedgersPerPrincipal = "
                    + maxLedgersPerPrincipal + " while the publisher was away); not applied again";
            case TOO_MANY_TOPICS -> "publish to '" + path + "' refused: it would create a topic beyond limits.maxTopics = "
                    + maxTopics;
            case OUT_OF_ORDER -> "publish to '" + path + "' refused: an earlier publish of this session was refused or "
                    + "timed out, and this one must not be applied before it is sent again; publish through another "
                    + "connection";
            case APPLIED, ALREADY_APPLIED -> throw new IllegalArgumentException(result + " is acked, not refused");
        };
    }
}
