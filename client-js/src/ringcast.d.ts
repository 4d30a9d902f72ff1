// Type declarations for ringcast.js, the Ringcast JavaScript client (wire protocol v1,
// docs/protocol.md). Everything here is public API except `internals`.

/** Connection states: `connecting` until the first WELCOME, `connected` ⇄ `reconnecting`, then `closed`. */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

/** How an update came; see {@link UpdateKind}. */
export type UpdateKindName = 'snapshot' | 'update' | 'snapshot-after-gap' | 'conflated' | 'gap-without-value';

/** The values of {@link Update.kind}. Frozen. */
export declare const UpdateKind: Readonly<{
    /** The topic's current value when a subscription starts. */
    SNAPSHOT: 'snapshot';
    /** A new value, or one replayed after a reconnect. */
    UPDATE: 'update';
    /** The current value after updates this client missed and the server could no longer replay
     *  (also after a server restart, whose sequences start over). */
    SNAPSHOT_AFTER_GAP: 'snapshot-after-gap';
    /** The newest value after the server skipped older ones, of a conflated topic because this
     *  client fell behind, or through a view held back by its `maxRate`: the sequence jumps on purpose. */
    CONFLATED: 'conflated';
    /** Updates were missed and the topic keeps no value (last-value cache off): `value` is empty;
     *  the next update brings the next value. */
    GAP_WITHOUT_VALUE: 'gap-without-value';
}>;

/** Protocol error names and their wire codes (docs/protocol.md, "Errors", which says which are fatal). Frozen. */
export declare const ErrorCode: Readonly<{
    MALFORMED_FRAME: 1;
    UNKNOWN_MESSAGE_TYPE: 2;
    TEXT_FRAME_NOT_SUPPORTED: 3;
    FRAME_TOO_LARGE: 4;
    HANDSHAKE_REQUIRED: 5;
    UNSUPPORTED_VERSION: 6;
    HANDSHAKE_TIMEOUT: 7;
    SLOW_CONSUMER: 8;
    IDLE_TIMEOUT: 9;
    SERVER_SHUTDOWN: 10;
    INTERNAL_ERROR: 11;
    TOO_MANY_CONNECTIONS: 12;
    AUTHENTICATION_FAILED: 13;
    INVALID_PATH: 20;
    INVALID_SELECTOR: 21;
    VALUE_TOO_LARGE: 22;
    DUPLICATE_SUBSCRIPTION_ID: 23;
    TOO_MANY_SUBSCRIPTIONS: 24;
    TOO_MANY_TOPICS: 25;
    PUBLISH_RATE_EXCEEDED: 26;
    PERMISSION_DENIED: 27;
    /** A cluster node on the minority side of a split: not applied. The client tries the next URL. */
    NO_MAJORITY: 28;
    /** A cluster node could not commit the publish in time: it may or may not be applied. The client tries the next URL. */
    REPLICATION_TIMEOUT: 29;
    /** A publish sent again (REPUBLISH) the server can no longer tell applied or not; it did not apply it again. */
    PUBLISH_OUTCOME_UNKNOWN: 30;
    /** A publish sent again whose correlation id this publisher first published to another topic; not applied. */
    REPUBLISH_CONFLICT: 31;
    /**
     * A subscription whose options the server refused: a `fields` path or a `filter` that does not
     * parse, a `rewind` beyond the server's history, or an option it does not serve; the reason
     * names the option and the fault. The subscription is over; the session stays open.
     */
    INVALID_OPTIONS: 32;
}>;

/** A protocol error name, such as `'SLOW_CONSUMER'`. */
export type ErrorCodeName = keyof typeof ErrorCode;

/**
 * The failure of a Ringcast operation: rejected promises, refused subscriptions, `'error'` events.
 */
export declare class RingcastError extends Error {
    constructor(message: string, code?: ErrorCodeName | null, closeCode?: number, options?: { cause?: unknown });
    /**
     * The protocol error name when the server sent an ERROR (or a local check applied the same
     * rule: `'INVALID_PATH'` for a bad publish path, `'VALUE_TOO_LARGE'` for a value over the
     * server's frame limit), else null (client closed, subscription closed, connect timeout).
     */
    readonly code: ErrorCodeName | null;
    /** The WebSocket close code when known (e.g. 1008 after SLOW_CONSUMER, 1000 after close()), else 0. */
    readonly closeCode: number;
}

/** Thrown by {@link applyDelta}; the message reads `"delta error: ..."` and names what is wrong. */
export declare class DeltaFormatError extends Error {
    constructor(what: string);
}

/** One value delivered to a subscription. Shared by every subscription it goes to: do not modify `value`. */
export interface Update {
    /** The topic path, e.g. `'fx/EURUSD/bid'`. */
    readonly topic: string;
    /**
     * The topic's sequence of this value (the first publish of a topic is 1). A u64 on the wire,
     * read as a Number: exact up to 2^53 - 1 (Number.MAX_SAFE_INTEGER), which a topic would reach
     * after 285 years at a million updates a second.
     */
    readonly sequence: number;
    /** The full value (deltas are applied before delivery). Empty for `'gap-without-value'`. */
    readonly value: Uint8Array;
    /** How the value came. */
    readonly kind: UpdateKindName;
    /** The value decoded as UTF-8 (invalid bytes become U+FFFD). */
    text(): string;
    /** `JSON.parse(text())`; throws a SyntaxError for a value that is not JSON. */
    json(): any;
}

/** A subscription; lives across reconnects until closed or refused. */
export interface Subscription {
    /** The selector as given to `subscribe`. */
    readonly selector: string;
    /** The wire subscription id, unique among the client's open subscriptions. */
    readonly id: number;
    /**
     * Resolves with the number of topics that matched once the server confirmed the subscription
     * (its snapshots have been delivered by then). Rejects with a RingcastError when the server
     * refused it (`code` e.g. `'INVALID_SELECTOR'`, `'TOO_MANY_SUBSCRIPTIONS'`), when it was closed
     * before confirmation, or when the client closed. The client marks the rejection handled, so
     * ignoring it is safe.
     */
    readonly confirmed: Promise<number>;
    /** Stops the subscription (UNSUBSCRIBE). No callback runs afterwards. Idempotent. */
    close(): void;
}

/**
 * The third argument of `subscribe`: callbacks, and options the server applies to this subscription
 * (docs/subscription-options.md has the `fields` and `filter` languages). Any other key is refused
 * with a TypeError; a key whose value is `undefined` counts as not given.
 *
 * `maxRate`, `fields` and `filter` make the subscription's **view**: the server sends it, for each
 * topic, only the values that pass `filter`, reduced to `fields`, at most `maxRate` a second, always
 * ending on the newest. Through a view:
 * - sequences jump (values filtered out, unchanged projections, throttled updates): an `'update'`
 *   or `'conflated'` after a jump is no gap, and none is reported;
 * - a topic whose value stops passing the filter is told to `onUnmatched` once; the next value
 *   that passes comes as an ordinary update;
 * - a subscription with a view and one without on the same topic each get their own stream (the
 *   topic twice on the session); deltas apply to what each holds, and duplicates after a reconnect
 *   are dropped per subscription and topic.
 *
 * `rewind` and `rewindSince` shape only what the subscription starts with. The options are sent in
 * each SUBSCRIBE of the subscription, the first and those that resume it after a reconnect. A server
 * refuses options it cannot take with `INVALID_OPTIONS` (`onError` is called, `confirmed` rejects);
 * the client refuses a subscription with a view the same way when a server from before views
 * confirms it without serving the view.
 */
export interface SubscribeOptions {
    /**
     * Called when the server refused the subscription (it is then over), and when a session ended
     * with a fatal server error such as SLOW_CONSUMER or SERVER_SHUTDOWN (it resumes on the next).
     */
    onError?: (error: RingcastError) => void;
    /**
     * Called when the value of sequence `sequence` of `topic` no longer passes the view's `filter`:
     * nothing of the topic comes until a value passes again. Only for a subscription with a view.
     */
    onUnmatched?: (topic: string, sequence: number) => void;
    /**
     * Called when a topic this subscription matches and had received (plain or through its view)
     * was removed (`client.remove`, the HTTP API, or expiry), once per topic and subscription:
     * `lastSequence` is its last update before the removal. Also when the client, back from being
     * away, finds the path under another incarnation (removed and created again meanwhile):
     * `lastSequence` is then the newest the client had of the old one. The client forgets the
     * topic; the subscription stays open, and a topic created again at the path comes as a new one,
     * its updates from sequence 1.
     */
    onRemoved?: (topic: string, lastSequence: number) => void;
    /**
     * At most this many updates per second per topic, 0.001 to 100000 (sent in thousandths,
     * rounded); an update held back is replaced by newer ones and sent as `'conflated'` when its
     * time comes, so a topic always ends on its newest value.
     */
    maxRate?: number;
    /**
     * Only these fields of each JSON value: 1 to 32 dotted paths (`'quote.bid'`), none inside
     * another. Values arrive as objects holding the named fields that are present, in the value's
     * order; a value that is not a JSON object arrives as `{}`.
     */
    fields?: readonly string[];
    /**
     * Only the values that pass this predicate on their fields, 1 to 1024 characters:
     * `"spread < 0.0005 and venue in ['LSE', 'XETRA']"`.
     */
    filter?: string;
    /**
     * Start each topic with its last `rewind` updates instead of its current value (1 to 2^31-1;
     * a server refuses more than its history keeps): `'snapshot'`s, oldest first, each with its
     * own sequence, then live updates.
     */
    rewind?: number;
    /**
     * Start each topic with its updates since this time, in milliseconds since the epoch (with
     * `rewind`: at most that many, none older), always including the newest.
     */
    rewindSince?: number | bigint;
}

/** The payload of the `'state'` event. */
export interface StateEvent {
    state: ConnectionState;
    /** The URL of the current connection or of the last attempt. */
    url: string;
    /** The session id from WELCOME; null unless connected. */
    sessionId: string | null;
    /** Why the last connection ended (the server's fatal ERROR, a close, a local failure); null when connected. */
    reason: string | null;
    /** The WebSocket close code of that end (from the close event, or the one the fatal error implies); 0 when unknown. */
    closeCode: number;
}

/** Counters over the client's life. A copy: read `client.stats` again for new values. */
export interface ClientStats {
    /** SNAPSHOT and UPDATE messages received, duplicates included. */
    updatesReceived: number;
    /**
     * UPDATEs at or below the topic's last known sequence: dropped, never delivered. Through a
     * view, counted per subscription that already had the sequence (viewed SNAPSHOTs, UPDATEs and
     * UNMATCHEDs alike).
     */
    duplicatesDropped: number;
    /** Sessions started after the first one. */
    reconnects: number;
    /** Delta updates applied to the previous value. */
    deltasApplied: number;
    /**
     * Messages of views that no open subscription takes, dropped: a VIEW for a subscription the
     * client no longer has, or a message through a view no open subscription matching the topic has
     * (both can cross an UNSUBSCRIBE).
     */
    viewMessagesDropped: number;
}

/** A WebSocket constructor: the browser's, Node 22's global one, or a compatible one. */
export type WebSocketConstructor = new (url: string) => WebSocket;

export interface ConnectOptions {
    /** Sent in HELLO; shows in server logs. Default `'ringcast-js'`. */
    clientName?: string;
    /** Backoff start in ms: the delay ceiling doubles per failed attempt; each delay is drawn from
     *  [ceiling/2, ceiling]. Default 100. */
    minReconnectDelayMs?: number;
    /** Backoff ceiling in ms. Default 5000. */
    maxReconnectDelayMs?: number;
    /** How long `connect()` keeps trying before it rejects and closes the client, and the limit of
     *  each attempt until WELCOME. Default 10000. */
    connectTimeoutMs?: number;
    /** After a PING, how long to wait for anything at all from the server before the connection
     *  counts as dead (checks that run late in throttled background tabs do not judge). Default 20000. */
    pongTimeoutMs?: number;
    /** PING at least this often when silent, and at least every idleTimeoutMs / 3 (from WELCOME). Default 30000. */
    maxPingIntervalMs?: number;
    /** The WebSocket constructor. Default `globalThis.WebSocket` (browsers, Node 22+; Node 20 with
     *  `--experimental-websocket`). `connect()` rejects with an Error when there is none. */
    WebSocket?: WebSocketConstructor;
    /**
     * Who the client is, sent in HELLO: a signed token (JWT) the server verifies, or a principal's
     * name and password (use wss:// beyond a trusted network). Default: anonymous. A refused login
     * is a fatal `AUTHENTICATION_FAILED` error naming the reason's class.
     */
    credentials?: { token: string } | { principal: string; password: string };
    /** Same as `client.on('state', listener)`, registered before the first attempt. */
    onStateChange?: (event: StateEvent) => void;
}

/**
 * A client of one or more Ringcast servers. Keeps one connection, reconnects for ever with
 * backoff until `close()`, and on each new session re-sends its subscriptions with resume lists
 * (the server replays what was missed, or sends a snapshot after a gap), then the publishes whose
 * ack the last connection did not bring (applied once). Listeners run in WebSocket message
 * events: keep them short.
 */
export interface RingcastClient {
    /**
     * Subscribes to every topic the selector matches (MQTT style: `+` one segment, a final `#`
     * the parent and everything below; `'#'` is every topic), including topics created later.
     * `onUpdate` first gets the current values as `'snapshot'`s, then every update. May be called
     * at any time; it is sent when connected. With `maxRate`, `fields` or `filter` in `options` it
     * gets the topics through a view: see {@link SubscribeOptions}.
     *
     * @throws TypeError naming the rule and the selector when it is malformed: empty, an empty
     *   segment (leading, trailing or double `/`), a wildcard mixed into a segment, `#` not last,
     *   whitespace or control characters, more than 65535 UTF-8 bytes or 1024 segments (the server
     *   then applies its own limits, 256 bytes and 16 segments by default, and refuses with
     *   INVALID_SELECTOR)
     * @throws TypeError naming the option and the rule for bad options: an unknown key, a callback
     *   that is not a function, `maxRate` out of 0.001 to 100000, `fields` not 1 to 32 strings,
     *   `filter` empty or over 1024 characters, `rewind` not a whole number from 1 to 2^31-1,
     *   `rewindSince` not a whole number from 0 to 2^63-1. The paths and the filter themselves are
     *   parsed by the server, which refuses them with `INVALID_OPTIONS`.
     */
    subscribe(selector: string, onUpdate: (update: Update) => void, options?: SubscribeOptions): Subscription;

    /**
     * Publishes a value (a string is sent as UTF-8). Resolves with the sequence the topic gave the
     * update. Publishes keep their call order; those made while disconnected go out on the next
     * session. A publish whose connection dropped before its ack is sent again first on the next
     * session, with the client's publisher id and its correlation id (REPUBLISH), so the server
     * applies it once; the promise then resolves with the sequence it got. In a cluster (several
     * URLs), a publish a node refuses with `'NO_MAJORITY'` (not applied) or `'REPLICATION_TIMEOUT'`
     * (outcome unknown) is sent again the same way through the next URL, once the node has
     * answered the publishes it still owes; it is rejected with that error only when every URL
     * refused it. Publishes sent again go out in the order they were first sent, whichever way
     * they came back. A Uint8Array or ArrayBuffer is not copied: leave it alone until the promise
     * settles.
     *
     * Rejects with a RingcastError: `code` `'INVALID_PATH'` for a bad path (at once, locally, or
     * from the server), `'VALUE_TOO_LARGE'` when the message exceeds the server's frame limit;
     * `'client closed'` (code null) when the client closed before the ack;
     * `'PUBLISH_OUTCOME_UNKNOWN'` when it was sent again after a lost connection and the server
     * could no longer tell whether the first send was applied (a restart, or its memory of this
     * client forgotten): it was not applied again, and may have been applied once. At most 1,024
     * publishes are sent and unacked at a time; the rest wait and go out as acks come.
     */
    publish(topic: string, value: string | Uint8Array | ArrayBuffer): Promise<number>;

    /**
     * Removes every existing topic the selector matches that this client may publish to (its
     * roles' publish grants; other topics are left as they are), with their values and history.
     * Resolves with how many the server removed (0 when the selector matches none). Subscribers of
     * a removed topic hear of it through `onRemoved`; a publish to the path later creates it
     * again, from sequence 1. Removals keep their call order with publishes, and one made while
     * disconnected goes out on the next session.
     *
     * Rejects with a RingcastError: `code` `'INVALID_SELECTOR'` for a malformed selector (at once,
     * locally, or from the server) or one that does not fit in the server's frame limit,
     * `'PERMISSION_DENIED'` when this client may publish nothing the selector could match, and in a
     * cluster `'NO_MAJORITY'` or `'REPLICATION_TIMEOUT'` (not sent again: call again to retry);
     * `code` null when the connection was lost after it was sent and before the answer (it may or
     * may not have been applied: it is not sent again, since that could remove a topic created
     * again meanwhile), or `'client closed'`.
     */
    remove(selector: string): Promise<number>;

    /**
     * Closes the socket (code 1000), sets the state to `'closed'` and rejects everything pending
     * with RingcastError('client closed'). Idempotent.
     */
    close(): void;

    /** The connection state. */
    readonly state: ConnectionState;
    /** The session id from WELCOME; null when not connected. */
    readonly sessionId: string | null;
    /** The URL of the current connection or attempt. */
    readonly url: string;
    /** Counters over the client's life (a fresh copy on each read). */
    readonly stats: ClientStats;

    /** State changes. Returns a function that removes the listener. */
    on(event: 'state', listener: (event: StateEvent) => void): () => void;
    /** Protocol problems worth logging (a malformed message, a bad delta); the client recovers by reconnecting. */
    on(event: 'error', listener: (error: RingcastError) => void): () => void;
}

/**
 * Connects to a Ringcast server: one `ws://host:port/ws` URL, or several tried round robin, one
 * per attempt. Resolves once the first session is welcomed. Rejects with a RingcastError (and
 * closes the client) when no address answered within `connectTimeoutMs`; rejects with a
 * TypeError for a URL that is not ws:// or wss://.
 */
export declare function connect(urlOrUrls: string | string[], options?: ConnectOptions): Promise<RingcastClient>;

/**
 * Applies a Ringcast delta (docs/protocol.md, "Deltas") to `base` and returns the target.
 * @throws DeltaFormatError for a delta for a base of another length, a truncated one, an empty or
 *   overrunning instruction, a copy past the base, bytes left over, or a checksum mismatch
 */
export declare function applyDelta(base: Uint8Array, delta: Uint8Array): Uint8Array;

/** CRC-32 (IEEE 802.3, as zlib and PNG) of the bytes, as an unsigned number. */
export declare function crc32(bytes: Uint8Array): number;

/** Codec, path and selector internals for the tests. Not public API: may change in any release. */
export declare const internals: Readonly<Record<string, any>>;
