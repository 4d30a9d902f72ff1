package io.ringcast.it;

import io.ringcast.server.RingcastServer;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One GET of a real node's {@code /metrics}, as Prometheus scrapes it: its text, and every sample
 * parsed ({@code name{labels}} to value; a value that is not a number fails the scrape).
 */
record MetricsScrape(String text, Map<String, Double> samples) {

    static MetricsScrape of(RingcastServer server) throws Exception {
        return of(server.port());
    }

    /** The same of the node listening on {@code port} of 127.0.0.1 (a node process). */
    static MetricsScrape of(int port) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
        Map<String, Double> samples = new LinkedHashMap<>();
        for (String line : r.body().split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return new MetricsScrape(r.body(), samples);
    }

    /** The value of the one sample named {@code series} ({@code name} or {@code name{labels}}). */
    double value(String series) {
        assertThat(samples).as("/metrics").containsKey(series);
        return samples.get(series);
    }

    /** The names of the samples, without labels: {@code ringcast_publish_to_write_seconds_bucket}, ... */
    Set<String> sampleNames() {
        Set<String> names = new TreeSet<>();
        for (String series : samples.keySet()) {
            int brace = series.indexOf('{');
            names.add(brace < 0 ? series : series.substring(0, brace));
        }
        return names;
    }
}
