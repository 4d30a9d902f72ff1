package io.ringcast.protocol;

/**
 * Message type bytes of wire protocol version 1 (see {@code docs/protocol.md}).
 * Client-to-server types have the high bit clear, server-to-client types have it set.
 */
public final class MessageType {
    public static final byte HELLO = 0x01;
    public static final byte SUBSCRIBE = 0x02;
    public static final byte UNSUBSCRIBE = 0x03;
    public static final byte PUBLISH = 0x04;
    public static final byte PING = 0x05;
    /** A publish sent again after its connection was lost before the ack (docs/protocol.md, "Publishing"). */
    public static final byte REPUBLISH = 0x06;
    /** Removes the topics a selector matches (docs/protocol.md, "Removing topics"). */
    public static final byte REMOVE = 0x07;

    public static final byte WELCOME = (byte) 0x81;
    public static final byte TOPIC = (byte) 0x82;
    public static final byte SNAPSHOT = (byte) 0x83;
    public static final byte UPDATE = (byte) 0x84;
    public static final byte PUBLISH_ACK = (byte) 0x85;
    public static final byte SUBSCRIBED = (byte) 0x86;
    public static final byte ERROR = (byte) 0x87;
    public static final byte PONG = (byte) 0x88;
    /** The view a subscription's topics come through. */
    public static final byte VIEW = (byte) 0x89;
    /** A topic's value no longer passes a view's filter. */
    public static final byte UNMATCHED = (byte) 0x8A;
    /** A topic the session received was removed. */
    public static final byte TOPIC_REMOVED = (byte) 0x8B;
    /** The answer to a {@code REMOVE}: how many topics it removed. */
    public static final byte REMOVED = (byte) 0x8C;

    private MessageType() {
    }

    /** A name for logs and error reasons, e.g. {@code "PUBLISH"} or {@code "0x7f"}. */
    public static String name(byte type) {
        switch (type) {
            case HELLO: return "HELLO";
            case SUBSCRIBE: return "SUBSCRIBE";
            case UNSUBSCRIBE: return "UNSUBSCRIBE";
            case PUBLISH: return "PUBLISH";
            case PING: return "PING";
            case REPUBLISH: return "REPUBLISH";
            case REMOVE: return "REMOVE";
            case WELCOME: return "WELCOME";
            case TOPIC: return "TOPIC";
            case SNAPSHOT: return "SNAPSHOT";
            case UPDATE: return "UPDATE";
            case PUBLISH_ACK: return "PUBLISH_ACK";
            case SUBSCRIBED: return "SUBSCRIBED";
            case ERROR: return "ERROR";
            case PONG: return "PONG";
            case VIEW: return "VIEW";
            case UNMATCHED: return "UNMATCHED";
            case TOPIC_REMOVED: return "TOPIC_REMOVED";
            case REMOVED: return "REMOVED";
            default: return String.format("0x%02x", type & 0xff);
        }
    }
}
