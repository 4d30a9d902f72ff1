package io.ringcast.cluster.internal.jgroups;

import org.jgroups.raft.StateMachine;

/**
 * A state machine that can be taken back to its empty state, for the engine to load the snapshot
 * and log into it again: {@link RaftGroup#start} does so when a join is refused and it starts the
 * stack anew (each start loads them).
 *
 * <p>Thread contract: {@link #reset} is called while the engine is stopped, on the thread that
 * starts the group; the engine's threads start again after it returns.
 */
interface ReloadableStateMachine extends StateMachine {

    /** Forgets everything applied and read, as if just made. */
    void reset();
}
