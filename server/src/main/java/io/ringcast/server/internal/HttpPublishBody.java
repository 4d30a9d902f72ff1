package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The JSON body of {@code POST /api/publish} (one publish) or {@code POST /api/publish/batch}
 * (many, in order), read strictly: an unknown field, a missing topic or value, two values for one
 * publish, a correlation id missing where a publisher id asks for one, or trailing text is a
 * {@link Malformed} that names it (docs/http-api.md). A value given as JSON ({@code "value"}) keeps
 * the bytes it was sent with, spaces and number spelling included; {@code "text"} is a string's
 * UTF-8, {@code "base64"} any bytes.
 *
 * @param publisherId   the publisher id, as a {@code HELLO}'s; 0 for none
 * @param retry         the publishes are sent again ({@code REPUBLISH}): applied at most once per
 *                      publisher id and correlation id
 * @param publishes     in the order given; never empty
 */
record HttpPublishBody(long publisherId, boolean retry, List<Publish> publishes) {
    private static final JsonFactory JSON = new JsonFactory();
    /** A topic path travels with a 16-bit length; {@code limits.maxPathBytes} is checked later, with the session's. */
    private static final int MAX_PATH_WIRE_BYTES = 0xFFFF;

    /**
     * One publish.
     *
     * @param correlationId the client's (with a publisher id, required), or one numbered here from 1
     */
    record Publish(String topic, byte[] value, int correlationId) {
        @Override
        public String toString() {
            return "Publish[" + topic + ", " + value.length + " bytes, correlation id " + correlationId + "]";
        }
    }

    /** The body is not what the endpoint takes; the message says what is wrong, for the client. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * @param batch {@code /api/publish/batch}'s body ({@code {"publishes": [...]}}) rather than one publish
     * @throws Malformed naming what is wrong
     */
    static HttpPublishBody parse(byte[] body, boolean batch) throws Malformed {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new Malformed("the body must be a JSON object" + (batch
                        ? " with \"publishes\": [{\"topic\": ..., \"value\": ...}, ...]"
                        : " with \"topic\" and \"value\" (or \"text\" or \"base64\")"));
            }
            long publisherId = 0;
            boolean retry = false;
            Fields one = batch ? null : new Fields();
            List<Fields> many = null;
            for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "publisherId" -> publisherId = longField(p, name);
                    case "retry" -> retry = booleanField(p, name);
                    case "publishes" -> {
                        if (!batch) {
                            throw new Malformed("\"publishes\" is for /api/publish/batch; /api/publish takes one"
                                    + " publish: \"topic\" and \"value\"");
                        }
                        many = publishes(p, body);
                    }
                    default -> {
                        if (batch) {
                            throw new Malformed("unknown field \"" + name + "\": a batch has \"publishes\", and"
                                    + " may have \"publisherId\" and \"retry\"");
                        }
                        one.read(name, p, body);
                    }
                }
            }
            if (p.nextToken() != null) {
                throw new Malformed("text after the JSON object, at byte " + p.currentTokenLocation().getByteOffset());
            }
            if (publisherId < 0) {
                throw new Malformed("\"publisherId\" must be a positive number (0 or absent: none)");
            }
            if (batch && (many == null || many.isEmpty())) {
                throw new Malformed("a batch needs \"publishes\": a non-empty array of {\"topic\": ..., \"value\": ...}");
            }
            List<Fields> given = batch ? many : List.of(one);
            List<Publish> publishes = new ArrayList<>(given.size());
            Set<Integer> correlationIds = new HashSet<>();
            for (int i = 0; i < given.size(); i++) {
                String where = batch ? "publishes[" + i + "]" : "the publish";
                Publish publish = given.get(i).publish(where, publisherId, i + 1);
                if (!correlationIds.add(publish.correlationId())) {
                    throw new Malformed(where + ": correlation id " + publish.correlationId()
                            + " is given twice in this request");
                }
                publishes.add(publish);
            }
            return new HttpPublishBody(publisherId, retry, publishes);
        } catch (JsonProcessingException e) {
            throw new Malformed("not JSON: " + e.getOriginalMessage() + " (at byte "
                    + e.getLocation().getByteOffset() + ")");
        } catch (IOException e) {
            throw new IllegalStateException("reading a byte array cannot fail", e);
        }
    }

    /**
     * The selector of {@code POST /api/remove}'s body, {@code {"selector": "fx/#"}}.
     *
     * @throws Malformed naming what is wrong
     */
    static String parseRemove(byte[] body) throws Malformed {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new Malformed("the body must be a JSON object with \"selector\", e.g. {\"selector\": \"fx/#\"}");
            }
            String selector = null;
            for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
                String name = p.currentName();
                p.nextToken();
                if (!name.equals("selector")) {
                    throw new Malformed("unknown field \"" + name + "\": a removal has \"selector\" alone");
                }
                selector = stringField(p, name);
            }
            if (p.nextToken() != null) {
                throw new Malformed("text after the JSON object, at byte " + p.currentTokenLocation().getByteOffset());
            }
            if (selector == null) {
                throw new Malformed("no \"selector\": name the topics to remove, e.g. \"fx/EURUSD\" or \"fx/#\"");
            }
            if (selector.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_WIRE_BYTES) {
                throw new Malformed("the selector is longer than " + MAX_PATH_WIRE_BYTES + " bytes");
            }
            return selector;
        } catch (JsonProcessingException e) {
            throw new Malformed("not JSON: " + e.getOriginalMessage() + " (at byte "
                    + e.getLocation().getByteOffset() + ")");
        } catch (IOException e) {
            throw new IllegalStateException("reading a byte array cannot fail", e);
        }
    }

    private static List<Fields> publishes(JsonParser p, byte[] body) throws IOException, Malformed {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new Malformed("\"publishes\" must be an array of {\"topic\": ..., \"value\": ...}");
        }
        List<Fields> all = new ArrayList<>();
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            if (t != JsonToken.START_OBJECT) {
                throw new Malformed("publishes[" + all.size() + "] must be an object {\"topic\": ..., \"value\": ...}");
            }
            Fields f = new Fields();
            for (JsonToken ft = p.nextToken(); ft == JsonToken.FIELD_NAME; ft = p.nextToken()) {
                String name = p.currentName();
                p.nextToken();
                if (name.equals("publisherId") || name.equals("retry")) {
                    throw new Malformed("publishes[" + all.size() + "]: \"" + name + "\" is given once, for the"
                            + " whole batch, beside \"publishes\"");
                }
                f.read(name, p, body);
            }
            all.add(f);
        }
        return all;
    }

    /** The fields of one publish as they are read. */
    private static final class Fields {
        String topic;
        byte[] value;
        String valueField;
        int correlationId;

        void read(String name, JsonParser p, byte[] body) throws IOException, Malformed {
            switch (name) {
                case "topic" -> topic = stringField(p, name);
                case "value" -> value(name, rawJson(p, body));
                case "text" -> value(name, stringField(p, name).getBytes(StandardCharsets.UTF_8));
                case "base64" -> {
                    try {
                        value(name, Base64.getDecoder().decode(stringField(p, name)));
                    } catch (IllegalArgumentException e) {
                        throw new Malformed("\"base64\" is not base64 (RFC 4648, with padding): " + e.getMessage());
                    }
                }
                case "correlationId" -> {
                    long id = longField(p, name);
                    if (id < 1 || id > Integer.MAX_VALUE) {
                        throw new Malformed("\"correlationId\" must be from 1 to " + Integer.MAX_VALUE + ", not " + id);
                    }
                    correlationId = (int) id;
                }
                default -> throw new Malformed("unknown field \"" + name + "\": a publish has \"topic\", one of"
                        + " \"value\" (JSON), \"text\" or \"base64\", and may have \"correlationId\"");
            }
        }

        private void value(String name, byte[] bytes) throws Malformed {
            if (valueField != null) {
                throw new Malformed("both \"" + valueField + "\" and \"" + name + "\": a publish has one value");
            }
            valueField = name;
            value = bytes;
        }

        Publish publish(String where, long publisherId, int numbered) throws Malformed {
            if (topic == null) {
                throw new Malformed(where + " has no \"topic\"");
            }
            if (topic.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_WIRE_BYTES) {
                throw new Malformed(where + ": the topic is longer than " + MAX_PATH_WIRE_BYTES + " bytes");
            }
            if (value == null) {
                throw new Malformed(where + " has no value: give \"value\" (any JSON), \"text\" (a string's"
                        + " UTF-8) or \"base64\" (bytes)");
            }
            if (publisherId != 0 && correlationId == 0) {
                throw new Malformed(where + " has no \"correlationId\": with a \"publisherId\", each publish needs"
                        + " one, so that a request sent again is applied once");
            }
            return new Publish(topic, value, correlationId != 0 ? correlationId : numbered);
        }
    }

    /** The bytes the current value was sent as, from its first byte to its last. */
    private static byte[] rawJson(JsonParser p, byte[] body) throws IOException {
        int start = (int) p.currentTokenLocation().getByteOffset();
        p.skipChildren();
        p.finishToken(); // a string is read lazily: its end is known once it is read
        int end = (int) p.currentLocation().getByteOffset();
        return Arrays.copyOfRange(body, start, end);
    }

    private static String stringField(JsonParser p, String name) throws IOException, Malformed {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw new Malformed("\"" + name + "\" must be a string");
        }
        return p.getText();
    }

    private static long longField(JsonParser p, String name) throws IOException, Malformed {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new Malformed("\"" + name + "\" must be a whole number of at most 64 bits");
        }
        return p.getLongValue();
    }

    private static boolean booleanField(JsonParser p, String name) throws Malformed {
        JsonToken t = p.currentToken();
        if (t != JsonToken.VALUE_TRUE && t != JsonToken.VALUE_FALSE) {
            throw new Malformed("\"" + name + "\" must be true or false");
        }
        return t == JsonToken.VALUE_TRUE;
    }
}
