package io.ringcast.client.internal;

import io.netty.channel.EventLoop;
import io.ringcast.client.RingcastException;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Carries commands from application threads to the event loop: any thread {@link #offer}s to a
 * lock-free queue, and at most one drain task at a time is scheduled on the loop. A drain takes
 * every command it can into the {@link ClientSession}, whose messages pile up in frames, and ends
 * with one flush: publishes made while a drain is pending or running share its frames (the
 * client's batching). A drain yields when the socket backs up (it resumes when the channel turns
 * writable) or after {@link ClientSession#MAX_FRAMES_PER_DRAIN} frames (it reschedules itself),
 * so reads are never starved; a yielding drain flushes only the full frames and leaves the last
 * one open for the next drain, so frames stay full. Commands keep their offer order.
 *
 * <p>Thread contract: {@link #offer} and {@link #scheduleDrain} from any thread; {@link #run} on
 * the event loop only. The queue is unbounded: publishes are bounded before they get here by the
 * client's in-flight limit, and subscription commands are few.
 */
final class CommandProxy implements Runnable {
    private final EventLoop eventLoop;
    private final ClientSession session;
    private final Queue<ClientCommand> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();

    CommandProxy(EventLoop eventLoop, ClientSession session) {
        this.eventLoop = eventLoop;
        this.session = session;
    }

    /** Any thread: queues a command for the event loop. */
    void offer(ClientCommand command) {
        queue.offer(command);
        scheduleDrain();
    }

    /** Any thread: makes sure a drain runs after the commands offered so far. */
    void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                eventLoop.execute(this);
            } catch (RejectedExecutionException e) {
                // the event loop is shut down: the client was closed and nothing will run these
                drainScheduled.set(false);
                failAll(new RingcastException("client is closed"));
            }
        }
    }

    /** The drain; event loop only. */
    @Override
    public void run() {
        assert eventLoop.inEventLoop();
        // cleared before polling: a command offered from now on schedules another drain
        drainScheduled.set(false);
        if (!session.canTakeCommands()) {
            return; // the channel turning writable schedules the next drain
        }
        ClientCommand command;
        while ((command = queue.poll()) != null) {
            command.execute(session);
            if (session.mustYield() && !queue.isEmpty()) {
                // more to come: send the full frames, keep the last one open for the next drain
                session.flushWritten();
                if (session.canTakeCommands()) {
                    scheduleDrain();
                }
                return;
            }
        }
        session.flush();
    }

    /** Fails every queued command; any thread. */
    void failAll(RingcastException error) {
        ClientCommand command;
        while ((command = queue.poll()) != null) {
            command.fail(error);
        }
    }
}
