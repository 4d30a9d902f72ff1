package io.ringcast.testkit;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FreePortsTest {

    @Test
    void noPortIsHandedOutTwiceWithinTheRecentPicks() throws IOException {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            int port = FreePorts.pick();
            assertTrue(port >= 20000 && port < 32000, "below the ephemeral range: " + port);
            assertTrue(seen.add(port), "port " + port + " handed out twice, at pick " + i);
        }
    }

    @Test
    void portsPickedApartKeepOutOfEachOthersRange() throws IOException {
        int[] ports = FreePorts.pickApart(10, 100, 10);
        assertEquals(10, ports.length);
        for (int p : ports) {
            for (int q : ports) {
                if (p != q) {
                    assertFalse(p >= q + 100 && p < q + 110, p + " is in " + q + "'s range");
                }
            }
        }
        assertEquals(10, Arrays.stream(ports).distinct().count());
    }
}
