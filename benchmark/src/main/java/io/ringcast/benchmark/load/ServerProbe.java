package io.ringcast.benchmark.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the servers' own delivery counters from {@code GET /health} (next to each {@code /ws}), so
 * a run can report the bytes the servers wrote per delivery: what deltas and compression save on
 * the wire. Best effort: a server that does not answer makes the figure unknown, never the run fail.
 * One thread.
 */
final class ServerProbe {
    /**
     * Server-side totals summed over every node; {@code known} false when a node did not answer.
     * {@code frames}: the WebSocket frames that carried the deliveries (a server from before
     * {@code deliveredFrames} existed wrote one frame per delivery).
     */
    record Totals(boolean known, long deliveries, long frames, long deliveredBytes) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<URI> healthUrls = new ArrayList<>();

    ServerProbe(List<String> webSocketUrls) {
        for (String ws : webSocketUrls) {
            URI u = URI.create(ws);
            healthUrls.add(URI.create("http://" + u.getHost() + ":" + u.getPort() + "/health"));
        }
    }

    /** The totals now; unknown when no server was given (a JetStream run: NATS has no such counters). */
    Totals read() {
        if (healthUrls.isEmpty()) {
            return new Totals(false, 0, 0, 0);
        }
        long deliveries = 0;
        long frames = 0;
        long bytes = 0;
        for (URI url : healthUrls) {
            try {
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                JsonNode body = JSON.readTree(r.body());
                if (r.statusCode() != 200 || !body.has("deliveredBytes")) {
                    return new Totals(false, 0, 0, 0);
                }
                deliveries += body.get("deliveries").asLong();
                frames += body.path("deliveredFrames").asLong(body.get("deliveries").asLong());
                bytes += body.get("deliveredBytes").asLong();
            } catch (IOException e) {
                return new Totals(false, 0, 0, 0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Totals(false, 0, 0, 0);
            }
        }
        return new Totals(true, deliveries, frames, bytes);
    }
}
