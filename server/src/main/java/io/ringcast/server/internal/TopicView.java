package io.ringcast.server.internal;


/**
 * One view of one topic: the sessions whose subscriptions see the topic through {@link #view}, and
 * what that view has made of the topic's updates so far, shared by all of them, so the view's work
 * is done once per update ({@link ViewedUpdates}) and its frames are encoded once.
 *
 * <p>Every member has been told the same: what the view shows of the topic's newest value, when
 * {@link #matched} (a snapshot when it joined, or the updates since), or nothing or
 * {@code UNMATCHED} when not. With {@code maxRate}, that may be {@link #held}: accepted, but not
 * yet sent, the members still on what they were shown ({@link #shownMatch}); a member joining
 * then has the held value sent to all first ({@code ViewedUpdates.showHeld}), so that it is told
 * what the others are.
 *
 * <p>It keeps no copy of what it shows (a thousand views of a hundred topics of a few kB held
 * hundreds of MB, issue 29): a view that matches shows the topic's newest value, which the topic
 * keeps one reference to for all its views ({@link Topic#viewedValue()}), and what it shows is made
 * from that again when it is needed ({@code ViewedUpdates.shown}). A projection is known by its
 * length and {@link #id0}..{@link #id3}, enough to tell that an update changes none of its fields.
 *
 * <p>Sequencer thread only; pollers read {@link #subscribers} and the final fields through a
 * fan-out event.
 */
final class TopicView extends Audience {
    final Topic topic;
    final View view;

    /** Whether the topic's newest value passed the filter (and there is one). */
    boolean matched;
    /**
     * Whether the members were last shown a value that passes (a snapshot, an update), rather than
     * {@code UNMATCHED} or nothing. Not {@link #matched} under {@code maxRate}: a value that passes
     * may be {@link #held}, never sent, when the next one fails, and then nothing needs unsaying.
     */
    boolean shownMatch;
    /**
     * With a projection: what it shows of the newest value, its bytes when they are at most 32
     * (zeros after), else their SHA-256, as four longs; with {@link #shownLength}, equal for equal
     * projections. Fields, not an array: read for every view on every update of the topic.
     */
    long id0;
    long id1;
    long id2;
    long id3;
    int shownLength;
    /** The topic's sequence of the update that made the view show what it shows. */
    long currentSequence;

    // ---- maxRate
    /** Whether what it shows waits for its time ({@code maxRate}): not sent yet. */
    boolean held;
    /** When it may be sent; valid while {@link #queued}. */
    long deadlineNanos;
    /** Whether the view is in {@link ViewedUpdates}' queue of held values (even when no longer {@link #held}). */
    boolean queued;
    /** When the last update went out through the view ({@link System#nanoTime()}); valid once {@link #sent}. */
    long lastSendNanos;
    boolean sent;
    /** Dropped from its topic (no member left): a queued entry is skipped. */
    boolean dropped;

    TopicView(Topic topic, View view, SubscriberSet empty) {
        super(empty);
        this.topic = topic;
        this.view = view;
    }

    @Override
    Topic topic() {
        return topic;
    }

    @Override
    int viewId() {
        return view.id;
    }

    /** Whether it shows a projection known by these. */
    boolean shows(long a, long b, long c, long d, int length) {
        return matched && shownLength == length && id0 == a && id1 == b && id2 == c && id3 == d;
    }

    /** It shows a new projection, known by these. */
    void shown(long a, long b, long c, long d, int length) {
        id0 = a;
        id1 = b;
        id2 = c;
        id3 = d;
        shownLength = length;
    }

    /** The newest value no longer passes: nothing is shown, nothing is held. */
    void unmatch() {
        matched = false;
        held = false;
    }
}
