package io.ringcast.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ringcast.client.RingcastClient;
import io.ringcast.client.Update;
import io.ringcast.testkit.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /api/publish/batch} to the nodes of a three-node cluster of real processes: a
 * follower takes a batch and acks it once its group's log applied it, in order; a request sent
 * again with {@code "retry"} through another node is applied once (the ledger is the cluster's);
 * a subscriber on a third node receives each publish once, in order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClusterHttpPublishTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static JsonNode post(String url, String body) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url + "/api/publish/batch"))
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @Test
    void aFollowerTakesABatchInOrderAndARetryThroughAnotherNodeIsAppliedOnce(TestInfo info) throws Exception {
        try (ClusterProcesses cluster = ClusterProcesses.start(info.getTestMethod().orElseThrow().getName(), 3, "")) {
            int leader = cluster.awaitLeader(Duration.ofSeconds(60));
            int follower = leader % 3 + 1;
            int other = follower % 3 + 1;
            List<String> got = new CopyOnWriteArrayList<>();
            try (RingcastClient subscriber = RingcastClient.builder().addresses(cluster.webSocketUrl(other)).build()) {
                subscriber.connect().get(30, TimeUnit.SECONDS);
                subscriber.subscribe("http/#", (Update u) -> got.add(u.topic() + " #" + u.sequence() + " " + u.text()))
                        .confirmed().get(30, TimeUnit.SECONDS);

                StringBuilder batch = new StringBuilder("{\"publisherId\": 31, \"publishes\": [");
                int n = 40;
                for (int i = 1; i <= n; i++) {
                    batch.append(i == 1 ? "" : ", ").append("{\"topic\": \"http/t").append(i % 2)
                            .append("\", \"text\": \"v").append(i).append("\", \"correlationId\": ").append(i).append('}');
                }
                batch.append("]}");
                JsonNode first = post(cluster.httpUrl(follower), batch.toString());
                assertThat(first.path("acked").asInt()).isEqualTo(n);
                JsonNode again = post(cluster.httpUrl(other), batch.toString().replace("{\"publisherId\": 31,",
                        "{\"publisherId\": 31, \"retry\": true,"));
                assertThat(again.path("results")).as("the same sequences through another node: applied once")
                        .isEqualTo(first.path("results"));

                List<String> expected = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    JsonNode r = first.path("results").get(i - 1);
                    assertThat(r.path("sequence").asLong()).as("publish %d", i).isEqualTo((i + 1) / 2);
                    expected.add("http/t" + (i % 2) + " #" + r.path("sequence").asLong() + " v" + i);
                }
                Await.until(() -> got.size() >= n, Duration.ofSeconds(30), Duration.ofMillis(20), () -> "every publish delivered: " + got);
                assertThat(got).containsExactlyInAnyOrderElementsOf(expected);
                for (String topic : List.of("http/t0", "http/t1")) {
                    List<String> ofTopic = got.stream().filter(l -> l.startsWith(topic + " ")).toList();
                    assertThat(ofTopic).as("in the order sent")
                            .isEqualTo(expected.stream().filter(l -> l.startsWith(topic + " ")).toList());
                }
            }
        }
    }
}
