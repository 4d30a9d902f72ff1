package io.ringcast.it;

import io.ringcast.it.cluster.ClusterProcesses;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code /status} page of a cluster node in a real headless Chromium, three real node
 * processes: the leader's page shows every member in its view with its lag, the group with its
 * leader, term and indexes, and charts whose time axis fills the window from the first samples; a
 * member that stops is shown out of the view. {@code /health} and {@code /metrics} carry the same.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClusterStatusPageTest {
    private static final String STATUS = "window.ringcastStatus";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static String rows(Chromium chromium) {
        return (String) chromium.eval("[...document.querySelectorAll('#cluster tr[data-member]')]"
                + ".map(r => r.dataset.member + ':' + [...r.cells].map(c => c.textContent).join(',')).join(' | ')");
    }

    @Test
    void theLeadersStatusPageShowsEachMembersLagAndTheGroupAndAMemberThatStopsLeavesItsView(TestInfo info)
            throws Exception {
        try (ClusterProcesses cluster = ClusterProcesses.start(info.getTestMethod().orElseThrow().getName(), 3, "",
                node -> "127.0.0.1");
             Chromium chromium = new Chromium()) {
            int leader = cluster.awaitLeader(Duration.ofSeconds(60));
            int follower = leader % 3 + 1;
            HttpResponse<String> published = HTTP.send(HttpRequest.newBuilder(URI.create(cluster.httpUrl(follower)
                    + "/api/publish")).POST(HttpRequest.BodyPublishers.ofString("{\"topic\": \"status/a\", \"value\": 1}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(published.statusCode()).as(published.body()).isEqualTo(200);

            chromium.open(cluster.httpUrl(leader) + "/status");
            chromium.waitFor(STATUS + ".samples >= 3 && " + STATUS + ".cluster !== null && "
                    + STATUS + ".cluster.groups[0].followers.length === 2", "three scrapes and the leader's view of its followers");
            String leaderName = "node-" + leader;
            String rows = rows(chromium);
            assertThat(rows).as(rows).contains(leaderName + ":" + leaderName + ",this node,g0,0");
            for (int n = 1; n <= 3; n++) {
                if (n != leader) {
                    assertThat(rows).as(rows).containsPattern("node-" + n + ":node-" + n + ",in view,,[0-9]+");
                }
            }
            String group = (String) chromium.eval("document.querySelector('#cluster tr[data-group=g0]').textContent");
            assertThat(group).as("the group's row names its leader").contains(leaderName);
            assertThat((Boolean) chromium.eval("document.getElementById('cluster').hidden")).isFalse();

            // the charts fill their window from the first samples: first point at the plot's left edge, last at its right
            assertThat(((Number) chromium.eval(STATUS + ".plots.publishes.firstX - " + STATUS + ".plots.publishes.left"))
                    .doubleValue()).isBetween(-0.5, 0.5);
            assertThat(((Number) chromium.eval(STATUS + ".plots.publishes.width - " + STATUS + ".plots.publishes.lastX"))
                    .doubleValue()).isBetween(-0.5, 0.5);
            assertThat((String) chromium.eval(STATUS + ".plots.publishes.timeLabels.join(' ')")).contains("now", "-1s");

            String metrics = cluster.metrics(leader);
            assertThat(metrics).contains("ringcast_cluster_follower_lag_entries{group=\"g0\",member=\"node-" + follower + "\"}");

            cluster.stop(follower);
            chromium.waitFor("[...document.querySelectorAll('#cluster tr[data-member]')].some(r => r.dataset.member === "
                    + "'node-" + follower + "' && r.textContent.includes('not in view'))", "the stopped member shown out of the view");
            chromium.screenshot("cluster-status-page");
        }
    }
}
