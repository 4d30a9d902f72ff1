package io.ringcast.it;

import io.ringcast.client.Update;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.UpdateListener;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A listener that keeps everything it is given, for assertions. */
final class Recorded implements UpdateListener {
    /** One received update, copied out of the client's object. */
    record Got(String topic, long sequence, UpdateKind kind, String text) {
    }

    /** A topic whose value stopped passing the subscription's filter ({@link UpdateListener#onUnmatched}). */
    record Unmatched(String topic, long sequence) {
    }

    /** A topic the subscription had that was removed ({@link UpdateListener#onRemoved}), and how many updates it had then. */
    record Removed(String topic, long lastSequence, int updatesBefore) {
    }

    final List<Got> updates = new CopyOnWriteArrayList<>();
    final List<Unmatched> unmatched = new CopyOnWriteArrayList<>();
    final List<Removed> removed = new CopyOnWriteArrayList<>();
    final List<Throwable> errors = new CopyOnWriteArrayList<>();

    @Override
    public void onUpdate(Update u) {
        updates.add(new Got(u.topic(), u.sequence(), u.kind(), u.text()));
    }

    @Override
    public void onUnmatched(String topic, long sequence) {
        unmatched.add(new Unmatched(topic, sequence));
    }

    @Override
    public void onRemoved(String topic, long lastSequence) {
        removed.add(new Removed(topic, lastSequence, updates.size()));
    }

    @Override
    public void onError(io.ringcast.client.RingcastException error) {
        errors.add(error);
    }

    List<Got> of(String topic) {
        List<Got> out = new ArrayList<>();
        for (Got g : updates) {
            if (g.topic().equals(topic)) {
                out.add(g);
            }
        }
        return out;
    }

    long lastSequence(String topic) {
        List<Got> t = of(topic);
        return t.isEmpty() ? 0 : t.get(t.size() - 1).sequence();
    }

    List<String> topics() {
        return updates.stream().map(Got::topic).distinct().sorted().toList();
    }
}
