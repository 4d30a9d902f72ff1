package io.ringcast.cluster.internal.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import org.jgroups.Address;
import org.jgroups.util.Util;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

/**
 * {@link RaftStack.HeardFrom} keeps when each address was last heard; an address that left the view
 * (a member restarted comes back under a new one) is forgotten once silent long enough, so a node
 * whose peers restart again and again does not keep an entry per restart.
 */
@Timeout(10)
class HeardFromTest {

    @Test
    void aNonMemberSilentLongerThanTheBoundIsForgottenWhileMembersAndRecentlyHeardOnesStay() {
        RaftStack.HeardFrom heard = new RaftStack.HeardFrom();
        Address member = Util.createRandomAddress("node-1");
        Address restarted = Util.createRandomAddress("node-2");
        heard.update(member, true, true);
        heard.update(restarted, true, true);

        heard.forgetSilentNonMembers(List.of(member), 60_000);
        assertThat(heard.msSinceHeardFrom(restarted)).as("heard just now: kept").isLessThan(60_000);

        heard.forgetSilentNonMembers(List.of(member), -1);
        assertThat(heard.msSinceHeardFrom(restarted)).as("a non-member silent over the bound").isEqualTo(Long.MAX_VALUE);
        assertThat(heard.msSinceHeardFrom(member)).as("a member, however silent").isLessThan(60_000);
    }
}
