package io.ringcast.client.internal;

import io.ringcast.client.RingcastException;

/** Work an application thread hands to the event loop through the {@link CommandProxy}. */
interface ClientCommand {

    /** Runs the command on the event loop. */
    void execute(ClientSession session);

    /** Fails the command without running it: the client closed first. Any thread. */
    void fail(RingcastException error);
}
