package io.ringcast.server.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The body of an HTTP publish: a JSON value keeps its bytes as sent; everything else is read strictly. */
@Timeout(10)
class HttpPublishBodyTest {
    private static HttpPublishBody parse(String json, boolean batch) throws HttpPublishBody.Malformed {
        return HttpPublishBody.parse(json.getBytes(StandardCharsets.UTF_8), batch);
    }

    private static String valueOf(String json) throws HttpPublishBody.Malformed {
        return new String(parse(json, false).publishes().get(0).value(), StandardCharsets.UTF_8);
    }

    /** Numbers keep their spelling (1.10 is not 1.1), strings their escapes, objects their spaces. */
    @ParameterizedTest
    @ValueSource(strings = {"1.10", "-1.5e3", "\"a \\\"quoted\\\" caf\\u00e9\"", "{ \"a\" : [1, 2 ,{}] }", "[]", "true",
            "null", "12345678901234567890123"})
    void aJsonValueKeepsTheBytesItWasSentWith(String value) throws Exception {
        assertThat(valueOf("{\"topic\": \"t\", \"value\": " + value + "}")).isEqualTo(value);
        assertThat(valueOf("{\"value\":" + value + ",\"topic\":\"t\"}")).as("first, no spaces").isEqualTo(value);
        assertThat(valueOf("{\"topic\":\"t\",\"value\":" + value + "}")).as("last, no spaces").isEqualTo(value);
    }

    @Test
    void textAndBase64GiveTheirBytes() throws Exception {
        assertThat(valueOf("{\"topic\": \"t\", \"text\": \"caf\\u00e9\"}")).isEqualTo("café");
        assertThat(parse("{\"topic\": \"t\", \"base64\": \"AAEC\"}", false).publishes().get(0).value())
                .containsExactly(0, 1, 2);
    }

    @Test
    void correlationIdsAreNumberedFromOneUnlessGiven() throws Exception {
        HttpPublishBody b = parse("{\"publishes\": [{\"topic\": \"a\", \"value\": 1}, {\"topic\": \"b\", \"value\": 2}]}", true);
        assertThat(b.publishes()).extracting(HttpPublishBody.Publish::correlationId).containsExactly(1, 2);
        HttpPublishBody given = parse("{\"publisherId\": 9, \"retry\": true, \"publishes\": [{\"topic\": \"a\", \"value\": 1,"
                + " \"correlationId\": 70}]}", true);
        assertThat(given.publisherId()).isEqualTo(9);
        assertThat(given.retry()).isTrue();
        assertThat(given.publishes().get(0).correlationId()).isEqualTo(70);
    }

    @Test
    void whatIsWrongIsNamed() {
        assertThatThrownBy(() -> parse("{\"publishes\": [{\"topic\": \"a\", \"value\": 1, \"correlationId\": 3},"
                + " {\"topic\": \"b\", \"value\": 1, \"correlationId\": 3}]}", true))
                .hasMessageContaining("publishes[1]: correlation id 3 is given twice");
        assertThatThrownBy(() -> parse("{\"publishes\": [{\"topic\": \"a\", \"value\": 1, \"retry\": true}]}", true))
                .hasMessageContaining("\"retry\" is given once, for the whole batch");
        assertThatThrownBy(() -> parse("{\"topic\": \"a\", \"value\": 1}", true))
                .hasMessageContaining("unknown field \"topic\": a batch has \"publishes\"");
        assertThatThrownBy(() -> parse("{\"topic\": \"a\", \"value\": 1, \"correlationId\": 0}", false))
                .hasMessageContaining("\"correlationId\" must be from 1 to");
        assertThatThrownBy(() -> parse("{\"topic\": \"a\", \"value\": 1, \"publisherId\": -4, \"correlationId\": 1}", false))
                .hasMessageContaining("\"publisherId\" must be a positive number");
        assertThatThrownBy(() -> parse("{\"topic\": \"a\", \"value\": {\"open\": ", false))
                .hasMessageStartingWith("not JSON: ");
    }
}
