// Ringcast JavaScript client: wire protocol v1 (docs/protocol.md) over a WebSocket.
//
// One ES module, no dependencies, standard APIs only: runs unchanged in browsers and in Node 20+
// (pass `options.WebSocket` where there is no global one). Sections: constants and errors, codec,
// delta, paths and selectors, client. Everything runs on the one JavaScript thread: listeners are
// called from WebSocket message events and must not block.

// ============================================================================ constants, errors

const PROTOCOL_VERSION = 1;
const HEADER_BYTES = 5;
/** The smallest frame limit a server may state; anything less cannot carry a useful publish. */
const MIN_SERVER_FRAME_BYTES = 64;
/**
 * Local path and selector limits: what the wire can carry (a u16 length), as the Java client.
 * The server checks its own, tighter limits (limits.maxPathBytes / maxPathDepth, 256 and 16 by
 * default) and refuses with INVALID_PATH or INVALID_SELECTOR; checking those here would refuse
 * what a server configured wider accepts.
 */
const MAX_PATH_BYTES = 65535;
const MAX_PATH_DEPTH = 1024;
/**
 * Subscription ids count up from 1 below 2^30 and publish correlation ids cycle through
 * [2^30, 2^31), so an ERROR's correlation id names one or the other whatever its code (as the
 * Java client does).
 */
const FIRST_CORRELATION_ID = 2 ** 30;
/**
 * Publishes sent and not acked at most (the protocol's rule for a client that gives a publisher
 * id: the server remembers that many per publisher, so a REPUBLISH it does not find was never
 * applied). More wait in the outbox and go out as acks come.
 */
const PUBLISH_WINDOW = 1024;
const LAST_CORRELATION_ID = 2 ** 31 - 1;
const LAST_SUBSCRIPTION_ID = FIRST_CORRELATION_ID - 1;
/** A check timer that fires this much later than scheduled ran in a throttled or frozen tab. */
const TIMER_LATENESS_TOLERANCE_MS = 5000;
/** WebSocket close codes the client sends; browsers allow only 1000 and 3000-4999. */
const CLOSE_NORMAL = 1000;
const CLOSE_LOCAL_FAILURE = 4000;
const CLOSE_PROTOCOL_ERROR = 4002;
/** Stop handing frames to the socket while this much is buffered; retry after a short pause. */
const MAX_BUFFERED_FRAMES = 2;
const BACKPRESSURE_RETRY_MS = 10;

const MessageType = Object.freeze({
    HELLO: 0x01, SUBSCRIBE: 0x02, UNSUBSCRIBE: 0x03, PUBLISH: 0x04, PING: 0x05, REPUBLISH: 0x06, REMOVE: 0x07,
    WELCOME: 0x81, TOPIC: 0x82, SNAPSHOT: 0x83, UPDATE: 0x84, PUBLISH_ACK: 0x85,
    SUBSCRIBED: 0x86, ERROR: 0x87, PONG: 0x88, VIEW: 0x89, UNMATCHED: 0x8A, TOPIC_REMOVED: 0x8B, REMOVED: 0x8C,
});

/** VIEWED (issue 16, being built): the message comes through a view, its u32 viewId after the flags. */
const Flags = Object.freeze({ GAP: 0x01, DELTA: 0x02, CONFLATED: 0x04, NO_VALUE: 0x08, VIEWED: 0x10 });

/**
 * The protocol's errors (docs/protocol.md, "Errors"), row for row the server's ErrorCode table:
 * name: [wire code, fatal (the server closes the connection after it), WebSocket close code it
 * closes with, 0 when not fatal]. ErrorCodeTablesTest (protocol module) holds this table against
 * the server's, so a code added there fails the build until it is added here.
 */
const ERRORS = Object.freeze({
    MALFORMED_FRAME: [1, true, 1002],
    UNKNOWN_MESSAGE_TYPE: [2, true, 1002],
    TEXT_FRAME_NOT_SUPPORTED: [3, true, 1003],
    FRAME_TOO_LARGE: [4, true, 1009],
    HANDSHAKE_REQUIRED: [5, true, 1008],
    UNSUPPORTED_VERSION: [6, true, 1002],
    HANDSHAKE_TIMEOUT: [7, true, 1008],
    SLOW_CONSUMER: [8, true, 1008],
    IDLE_TIMEOUT: [9, true, 1001],
    SERVER_SHUTDOWN: [10, true, 1001],
    INTERNAL_ERROR: [11, true, 1011],
    TOO_MANY_CONNECTIONS: [12, true, 1013],
    AUTHENTICATION_FAILED: [13, true, 1008],
    INVALID_PATH: [20, false, 0],
    INVALID_SELECTOR: [21, false, 0],
    VALUE_TOO_LARGE: [22, false, 0],
    DUPLICATE_SUBSCRIPTION_ID: [23, false, 0],
    TOO_MANY_SUBSCRIPTIONS: [24, false, 0],
    TOO_MANY_TOPICS: [25, false, 0],
    PUBLISH_RATE_EXCEEDED: [26, false, 0],
    PERMISSION_DENIED: [27, false, 0],
    NO_MAJORITY: [28, false, 0],
    REPLICATION_TIMEOUT: [29, false, 0],
    PUBLISH_OUTCOME_UNKNOWN: [30, false, 0],
    REPUBLISH_CONFLICT: [31, false, 0],
    INVALID_OPTIONS: [32, false, 0],
});

/** Protocol error codes by name; the fatal ones are marked in ERRORS. */
export const ErrorCode = Object.freeze(Object.fromEntries(
    Object.entries(ERRORS).map(([name, [code]]) => [name, code])));

const ERROR_NAMES = new Map(Object.entries(ERRORS).map(([name, [code]]) => [code, name]));
/** The WebSocket close code the server uses after each fatal error, for when the close event has none. */
const FATAL_CLOSE_CODES = new Map(Object.values(ERRORS).filter(([, fatal]) => fatal)
    .map(([code, , closeCode]) => [code, closeCode]));

const isFatalCode = (code) => FATAL_CLOSE_CODES.has(code);

/** How an update came; `Update.kind` is one of these. */
export const UpdateKind = Object.freeze({
    /** The topic's current value when a subscription starts. */
    SNAPSHOT: 'snapshot',
    /** A new value, or one replayed after a reconnect. */
    UPDATE: 'update',
    /** The current value after updates this client missed and the server could no longer replay. */
    SNAPSHOT_AFTER_GAP: 'snapshot-after-gap',
    /**
     * The newest value after the server skipped older ones (a conflated topic, or a view's maxRate):
     * the sequence jumps.
     */
    CONFLATED: 'conflated',
    /** Updates were missed and the topic keeps no value: `value` is empty. */
    GAP_WITHOUT_VALUE: 'gap-without-value',
});

/**
 * A failure of a Ringcast operation. `code` is the protocol error name ('SLOW_CONSUMER',
 * 'INVALID_PATH', ...) when the server sent an ERROR or a local check applied the same rule, else
 * null; `closeCode` is the WebSocket close code when known, else 0.
 */
export class RingcastError extends Error {
    constructor(message, code = null, closeCode = 0, options = undefined) {
        super(message, options);
        this.name = 'RingcastError';
        this.code = code;
        this.closeCode = closeCode;
    }
}

/** A delta that cannot be applied; the message reads "delta error: ..." and names what is wrong. */
export class DeltaFormatError extends Error {
    constructor(what) {
        super('delta error: ' + what);
        this.name = 'DeltaFormatError';
    }
}

/** A message from the server that breaks the protocol; the connection ends with it. */
class ProtocolError extends Error {
    constructor(code, message) {
        super(message);
        this.name = 'ProtocolError';
        this.code = code;
    }
}

// ============================================================================ codec

const utf8Encoder = new TextEncoder();
/** Strict for protocol strings: invalid UTF-8 there is MALFORMED_FRAME. */
const strictUtf8Decoder = new TextDecoder('utf-8', { fatal: true });
/** Lenient for values: `Update.text()` shows bad bytes as U+FFFD rather than throwing. */
const utf8Decoder = new TextDecoder('utf-8');
const EMPTY = new Uint8Array(0);

/** Builds one message: header, then fields appended through the DataView. */
class MessageWriter {
    constructor(type, bodyBytes) {
        this.bytes = new Uint8Array(HEADER_BYTES + bodyBytes);
        this.view = new DataView(this.bytes.buffer);
        this.view.setUint8(0, type);
        this.view.setUint32(1, bodyBytes);
        this.pos = HEADER_BYTES;
    }
    u8(v) { this.view.setUint8(this.pos, v); this.pos += 1; return this; }
    u16(v) { this.view.setUint16(this.pos, v); this.pos += 2; return this; }
    u32(v) { this.view.setUint32(this.pos, v); this.pos += 4; return this; }
    u64(v) { this.view.setBigUint64(this.pos, BigInt(v)); this.pos += 8; return this; }
    raw(b) { this.bytes.set(b, this.pos); this.pos += b.length; return this; }
    /** A `string` field from already encoded UTF-8. */
    str(utf8) { return this.u16(utf8.length).raw(utf8); }
}

function utf8Of(textOrBytes) {
    return typeof textOrBytes === 'string' ? utf8Encoder.encode(textOrBytes) : textOrBytes;
}

function checkStringField(utf8, what) {
    if (utf8.length > 0xFFFF) {
        throw new RangeError(`${what} of ${utf8.length} UTF-8 bytes is longer than the 65535 a string field holds`);
    }
    return utf8;
}

/** Credentials kinds at the end of HELLO (docs/protocol.md, "Authentication"). */
const CREDENTIALS_NONE = 0;
const CREDENTIALS_PASSWORD = 1;
const CREDENTIALS_TOKEN = 2;

/**
 * @param credentials undefined (anonymous), { principal, password } or { token }
 * @param publisherId a BigInt (or Number) u64; 0 or undefined: none. With one, an anonymous HELLO
 *   writes credentials kind 0 before it; without one and anonymous, HELLO ends after the name.
 * @param connection this connection's number among the client's (1 for the first, one more for
 *   each), u32, written after the publisher id (only with one); 0: none. A cluster orders the
 *   publisher's sessions by it (docs/protocol.md, "Sending a publish again").
 */
function encodeHello(clientName, version = PROTOCOL_VERSION, credentials = undefined, publisherId = 0n,
    connection = 0) {
    const name = checkStringField(utf8Of(clientName), 'clientName');
    const withPublisherId = publisherId !== undefined && publisherId !== null && BigInt(publisherId) !== 0n;
    let kind = null;
    let fields = [];
    if (credentials && credentials.token !== undefined) {
        kind = CREDENTIALS_TOKEN;
        fields = [checkStringField(utf8Of(credentials.token), 'token')];
    } else if (credentials) {
        kind = CREDENTIALS_PASSWORD;
        fields = [checkStringField(utf8Of(credentials.principal), 'principal'),
            checkStringField(utf8Of(credentials.password), 'password')];
    } else if (withPublisherId) {
        kind = CREDENTIALS_NONE;
    }
    const withConnection = withPublisherId && connection > 0;
    if (withConnection && !(Number.isInteger(connection) && connection <= 0xFFFFFFFF)) {
        throw new RangeError(`connection ${connection}: 1 to 2^32-1`);
    }
    let body = 2 + 2 + name.length + (kind === null ? 0 : 1) + (withPublisherId ? 8 : 0) + (withConnection ? 4 : 0);
    for (const field of fields) body += 2 + field.length;
    const w = new MessageWriter(MessageType.HELLO, body).u16(version).str(name);
    if (kind !== null) w.u8(kind);
    for (const field of fields) w.str(field);
    if (withPublisherId) w.u64(publisherId);
    if (withConnection) w.u32(connection);
    return w.bytes;
}

/**
 * @param resume array of [pathUtf8OrString, lastSequence]
 * @param options undefined, or { maxRate, fields, filter, rewind, rewindSince }: see encodeSubscribeOptions
 * @param incarnations undefined, or the incarnation of each resume position, in its order (0: not
 *   known): the `incarnations` option, after the others; see withIncarnations
 */
function encodeSubscribe(subscriptionId, selector, resume = [], options = undefined, incarnations = undefined) {
    return encodeSubscribeWithBlock(subscriptionId, selector, resume,
        withIncarnations(encodeSubscribeOptions(options), incarnations, resume.length));
}

/**
 * SUBSCRIBE with an options block already encoded (encodeSubscribeOptions; empty for none): a
 * subscription encodes its options once and sends the same block in its every SUBSCRIBE.
 */
function encodeSubscribeWithBlock(subscriptionId, selector, resume, block) {
    const sel = checkStringField(utf8Of(selector), 'selector');
    const entries = resume.map(([path, sequence]) => [checkStringField(utf8Of(path), 'path'), sequence]);
    let body = 4 + 2 + sel.length + 4 + block.length;
    for (const [path] of entries) body += 2 + path.length + 8;
    const w = new MessageWriter(MessageType.SUBSCRIBE, body).u32(subscriptionId).str(sel).u32(entries.length);
    for (const [path, sequence] of entries) w.str(path).u64(sequence);
    return w.raw(block).bytes;
}

/** The kinds of the options block of SUBSCRIBE (docs/protocol.md, "Subscribe options"), by option name. */
const SUBSCRIBE_OPTION_KINDS = Object.freeze({ maxRate: 1, fields: 2, filter: 3, rewind: 4, rewindSince: 5 });
/**
 * The kind of `incarnations`, which the client writes itself for a resume list (not an option of
 * subscribe()): the highest kind, so it always comes after the others.
 */
const INCARNATIONS_KIND = 6;
/** The most resume positions `incarnations` can name: its value, 4 bytes each, has a u16 length. */
const MAX_RESUME_INCARNATIONS = Math.floor(0xFFFF / 4);
const MAX_FIELDS = 32;
const MAX_FILTER_CHARS = 1024;
const MAX_OPTION_VALUE_BYTES = 0xFFFF;

/** A u32 or u64 option value, big-endian. */
function uintBytes(bytes, value) {
    const v = new Uint8Array(bytes);
    if (bytes === 4) new DataView(v.buffer).setUint32(0, value);
    else new DataView(v.buffer).setBigUint64(0, BigInt(value));
    return v;
}

/**
 * The options block of SUBSCRIBE (issue 16, being built: the server refuses options with
 * INVALID_OPTIONS until views are served): `u8 optionCount`, then per option `u8 kind`,
 * `u16 length` and its value, in the order of their kinds. No options (undefined, null, or none
 * set) is no block at all: such a SUBSCRIBE is byte for byte that of protocol version 1.
 * Refuses what the wire cannot carry, as the Java codec's SubscribeOptions does, with a
 * TypeError or RangeError whose message starts with the option's name; the paths and the filter
 * themselves are checked by the server.
 *
 * @param options { maxRate: updates per second per topic, 0.001 to 100000 (sent in thousandths,
 *   rounded); fields: 1 to 32 paths; filter: 1 to 1024 characters; rewind: the last N updates,
 *   1 to 2^31-1; rewindSince: milliseconds since the epoch, a Number or BigInt >= 0 }
 */
function encodeSubscribeOptions(options) {
    if (options === undefined || options === null) return EMPTY;
    if (typeof options !== 'object' || Array.isArray(options)) {
        throw new TypeError(`subscribe options must be an object of ${Object.keys(SUBSCRIBE_OPTION_KINDS).join(', ')}`);
    }
    for (const name of Object.keys(options)) {
        if (!Object.hasOwn(SUBSCRIBE_OPTION_KINDS, name)) {
            throw new TypeError(`unknown subscribe option '${name}' (${Object.keys(SUBSCRIBE_OPTION_KINDS).join(', ')})`);
        }
    }
    const { maxRate, fields, filter, rewind, rewindSince } = options;
    const values = []; // [kind, value bytes], in the order of the kinds
    if (maxRate !== undefined) {
        if (typeof maxRate !== 'number' || !(maxRate >= 0.001 && maxRate <= 100_000)) {
            throw new RangeError(`maxRate: ${maxRate} updates per second is out of range (0.001 to 100000)`);
        }
        values.push([SUBSCRIBE_OPTION_KINDS.maxRate, uintBytes(4, Math.round(maxRate * 1000))]);
    }
    if (fields !== undefined) {
        if (!Array.isArray(fields)) throw new TypeError('fields: an array of paths');
        if (fields.length === 0) throw new RangeError('fields: no paths given; name at least one');
        if (fields.length > MAX_FIELDS) throw new RangeError(`fields: ${fields.length} paths, more than ${MAX_FIELDS}`);
        const paths = fields.map((path, i) => {
            if (typeof path !== 'string') throw new TypeError(`fields: path ${i + 1} is not a string`);
            return utf8Encoder.encode(path);
        });
        const bytes = paths.reduce((sum, p) => sum + 2 + p.length, 1);
        if (bytes > MAX_OPTION_VALUE_BYTES) {
            throw new RangeError(`fields: ${bytes} bytes on the wire, more than the ${MAX_OPTION_VALUE_BYTES} an option holds`);
        }
        const v = new Uint8Array(bytes);
        const view = new DataView(v.buffer);
        v[0] = paths.length;
        let pos = 1;
        for (const p of paths) { view.setUint16(pos, p.length); v.set(p, pos + 2); pos += 2 + p.length; }
        values.push([SUBSCRIBE_OPTION_KINDS.fields, v]);
    }
    if (filter !== undefined) {
        if (typeof filter !== 'string') throw new TypeError('filter: a string');
        if (filter.length === 0) throw new RangeError('filter: empty');
        if (filter.length > MAX_FILTER_CHARS) { // UTF-16 code units, as the server counts
            throw new RangeError(`filter: longer than ${MAX_FILTER_CHARS} characters (${filter.length})`);
        }
        values.push([SUBSCRIBE_OPTION_KINDS.filter, utf8Encoder.encode(filter)]);
    }
    if (rewind !== undefined) {
        if (!Number.isInteger(rewind) || rewind < 1 || rewind > 2 ** 31 - 1) {
            throw new RangeError(`rewind: ${rewind} updates, out of range (1 to ${2 ** 31 - 1})`);
        }
        values.push([SUBSCRIBE_OPTION_KINDS.rewind, uintBytes(4, rewind)]);
    }
    if (rewindSince !== undefined) {
        const ok = typeof rewindSince === 'bigint' ? rewindSince >= 0n && rewindSince <= 0x7FFFFFFFFFFFFFFFn
            : Number.isSafeInteger(rewindSince) && rewindSince >= 0;
        if (!ok) {
            throw new RangeError(`rewindSince: ${rewindSince} is not milliseconds since the epoch (a whole number, `
                + 'at least 0, at most 2^63-1)');
        }
        values.push([SUBSCRIBE_OPTION_KINDS.rewindSince, uintBytes(8, rewindSince)]);
    }
    if (values.length === 0) return EMPTY;
    const block = new Uint8Array(values.reduce((sum, [, v]) => sum + 3 + v.length, 1));
    const view = new DataView(block.buffer);
    block[0] = values.length;
    let pos = 1;
    for (const [kind, v] of values) {
        block[pos] = kind;
        view.setUint16(pos + 1, v.length);
        block.set(v, pos + 3);
        pos += 3 + v.length;
    }
    return block;
}

/**
 * An options block (encodeSubscribeOptions; empty for none) with the `incarnations` option added
 * after its options: optionCount one more, then `u8 6`, `u16 4 x n`, and a u32 per resume position
 * (docs/protocol.md, "Removing topics"). The block unchanged when there is nothing to say: no
 * incarnations, all of them 0 (not known), or more than MAX_RESUME_INCARNATIONS positions (a longer
 * resume list travels without the option).
 *
 * @param incarnations undefined, or an array of u32, one per resume position
 * @param resumeCount the resume list's length, which `incarnations` must have
 */
function withIncarnations(block, incarnations, resumeCount) {
    if (incarnations === undefined || incarnations === null) return block;
    if (incarnations.length !== resumeCount) {
        throw new RangeError(`incarnations: ${incarnations.length} for ${resumeCount} resume positions; one each`);
    }
    incarnations.forEach((incarnation, i) => {
        if (!Number.isInteger(incarnation) || incarnation < 0 || incarnation > 0xFFFFFFFF) {
            throw new RangeError(`incarnations: position ${i + 1} is ${incarnation}, not a u32`);
        }
    });
    if (incarnations.length > MAX_RESUME_INCARNATIONS || incarnations.every((incarnation) => incarnation === 0)) {
        return block;
    }
    const head = block.length === 0 ? 1 : block.length; // optionCount alone, or the block with its own
    const out = new Uint8Array(head + 3 + 4 * incarnations.length);
    const view = new DataView(out.buffer);
    out.set(block, 0);
    out[0] = (block.length === 0 ? 0 : block[0]) + 1;
    out[head] = INCARNATIONS_KIND;
    view.setUint16(head + 1, 4 * incarnations.length);
    incarnations.forEach((incarnation, i) => view.setUint32(head + 3 + 4 * i, incarnation));
    return out;
}

function encodeUnsubscribe(subscriptionId) {
    return new MessageWriter(MessageType.UNSUBSCRIBE, 4).u32(subscriptionId).bytes;
}

function encodePublish(correlationId, topic, value) {
    return encodePublishBody(MessageType.PUBLISH, correlationId, topic, value);
}

/** REPUBLISH: the body of PUBLISH, for a publish sent again with the correlation id it first had. */
function encodeRepublish(correlationId, topic, value) {
    return encodePublishBody(MessageType.REPUBLISH, correlationId, topic, value);
}

function encodePublishBody(type, correlationId, topic, value) {
    const path = checkStringField(utf8Of(topic), 'topic');
    const bytes = utf8Of(value);
    return new MessageWriter(type, 4 + 2 + path.length + bytes.length).u32(correlationId).str(path).raw(bytes).bytes;
}

/** REMOVE: removes the topics the selector matches that the session may publish to; answered by REMOVED or ERROR. */
function encodeRemove(correlationId, selector) {
    const sel = checkStringField(utf8Of(selector), 'selector');
    return new MessageWriter(MessageType.REMOVE, 4 + 2 + sel.length).u32(correlationId).str(sel).bytes;
}

function encodePing(nonce) {
    return new MessageWriter(MessageType.PING, 8).u64(nonce).bytes;
}

const TYPE_NAMES = new Map(Object.entries(MessageType).map(([name, type]) => [type, name]));
const typeName = (type) => TYPE_NAMES.get(type) ?? '0x' + type.toString(16).padStart(2, '0');

/** Reads the fields of one message body, refusing reads past its end. */
class BodyReader {
    constructor(frame, view, start, end, type) {
        Object.assign(this, { frame, view, pos: start, end, type });
    }
    need(bytes, field) {
        if (this.end - this.pos < bytes) {
            throw new ProtocolError('MALFORMED_FRAME', `truncated or malformed ${typeName(this.type)} message: field `
                + `${field} needs ${bytes} bytes, ${this.end - this.pos} left in the body`);
        }
    }
    u8(field) { this.need(1, field); return this.view.getUint8(this.pos++); }
    u16(field) { this.need(2, field); const v = this.view.getUint16(this.pos); this.pos += 2; return v; }
    u32(field) { this.need(4, field); const v = this.view.getUint32(this.pos); this.pos += 4; return v; }
    /** A u64 as a Number: exact up to 2^53 (Number.MAX_SAFE_INTEGER), rounded beyond. */
    u64(field) {
        this.need(8, field);
        const v = this.view.getBigUint64(this.pos);
        this.pos += 8;
        if (v > 0x7FFFFFFFFFFFFFFFn) {
            throw new ProtocolError('MALFORMED_FRAME', `${typeName(this.type)} field ${field} is ${v}, above 2^63-1`);
        }
        return Number(v);
    }
    string(field) {
        const length = this.u16(field + ' length');
        this.need(length, field);
        const bytes = this.frame.subarray(this.pos, this.pos + length);
        this.pos += length;
        try {
            return strictUtf8Decoder.decode(bytes);
        } catch {
            throw new ProtocolError('MALFORMED_FRAME', `${typeName(this.type)} field ${field} is not valid UTF-8`);
        }
    }
    /** The rest of the body (a value), copied so that it does not keep the whole frame alive. */
    rest() { const v = this.frame.slice(this.pos, this.end); this.pos = this.end; return v; }
}

/** Decodes the body of one server-to-client message; fields a newer revision appends are skipped. */
function decodeBody(r) {
    switch (r.type) {
        case MessageType.WELCOME:
            return { type: 'WELCOME', version: r.u16('version'), sessionId: r.string('sessionId'),
                maxFrameBytes: r.u32('maxFrameBytes'), idleTimeoutMs: r.u32('idleTimeoutMs') };
        case MessageType.TOPIC:
            // incarnation: appended (docs/protocol.md, "Removing topics"); without it, 0: not known
            return { type: 'TOPIC', alias: r.u32('alias'), path: r.string('topicPath'),
                incarnation: r.pos < r.end ? r.u32('incarnation') : 0 };
        case MessageType.SNAPSHOT:
            return viewed(r, { type: 'SNAPSHOT', subscriptionId: r.u32('subscriptionId'), alias: r.u32('alias'),
                sequence: r.u64('sequence'), flags: r.u8('flags') });
        case MessageType.UPDATE:
            return viewed(r, { type: 'UPDATE', alias: r.u32('alias'), sequence: r.u64('sequence'),
                flags: r.u8('flags') });
        case MessageType.PUBLISH_ACK:
            return { type: 'PUBLISH_ACK', correlationId: r.u32('correlationId'), sequence: r.u64('sequence') };
        case MessageType.SUBSCRIBED:
            return { type: 'SUBSCRIBED', subscriptionId: r.u32('subscriptionId'),
                matchedTopics: r.u32('matchedTopics') };
        case MessageType.ERROR:
            return { type: 'ERROR', code: r.u16('code'), correlationId: r.u32('correlationId'),
                reason: r.string('reason') };
        case MessageType.PONG:
            r.need(8, 'nonce'); // opaque: all 64 bits allowed, and nothing reads it
            return { type: 'PONG' };
        case MessageType.VIEW:
            return { type: 'VIEW', subscriptionId: r.u32('subscriptionId'), viewId: r.u32('viewId') };
        case MessageType.UNMATCHED:
            return { type: 'UNMATCHED', viewId: r.u32('viewId'), alias: r.u32('alias'), sequence: r.u64('sequence') };
        case MessageType.TOPIC_REMOVED:
            return { type: 'TOPIC_REMOVED', alias: r.u32('alias'), lastSequence: r.u64('lastSequence') };
        case MessageType.REMOVED:
            return { type: 'REMOVED', correlationId: r.u32('correlationId'), removedTopics: r.u32('removedTopics') };
        default:
            throw new ProtocolError('UNKNOWN_MESSAGE_TYPE', `unknown message type ${typeName(r.type)} from the server`);
    }
}

/**
 * The rest of a SNAPSHOT or UPDATE after its flags: with VIEWED, `viewId` (a u32) before the value;
 * without, no `viewId` property at all, so that a message without a view is what it always was.
 */
function viewed(r, m) {
    if ((m.flags & Flags.VIEWED) !== 0) m.viewId = r.u32('viewId');
    m.value = r.rest();
    return m;
}

/**
 * Decodes every message of a server frame in order. With `onMessage`, hands each to it as it is
 * decoded (messages before a malformed one are handled); without, returns them as an array.
 * Throws a ProtocolError (with `code`, a protocol error name) on a malformed or unknown message.
 */
function decodeFrame(frame, onMessage = null) {
    const bytes = frame instanceof Uint8Array ? frame : new Uint8Array(frame);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const collected = onMessage ? null : [];
    if (bytes.length === 0) {
        throw new ProtocolError('MALFORMED_FRAME', 'empty frame: a frame holds at least one message');
    }
    let offset = 0;
    while (offset < bytes.length) {
        if (bytes.length - offset < HEADER_BYTES) {
            throw new ProtocolError('MALFORMED_FRAME', `truncated message header at offset ${offset}`);
        }
        const type = view.getUint8(offset);
        const length = view.getUint32(offset + 1);
        const start = offset + HEADER_BYTES;
        if (length > bytes.length - start) {
            throw new ProtocolError('MALFORMED_FRAME', `truncated ${typeName(type)} message at offset ${offset}: `
                + `body length ${length} but only ${bytes.length - start} bytes left in the frame`);
        }
        const message = decodeBody(new BodyReader(bytes, view, start, start + length, type));
        offset = start + length;
        if (onMessage) onMessage(message); else collected.push(message);
    }
    return collected;
}

/** Packs encoded messages into frames of at most `maxFrameBytes` (a message never spans two). */
function packFrames(messages, maxFrameBytes) {
    const frames = [];
    let batch = [];
    let size = 0;
    const close = () => {
        const frame = new Uint8Array(size);
        let pos = 0;
        for (const m of batch) { frame.set(m, pos); pos += m.length; }
        frames.push(frame);
        batch = [];
        size = 0;
    };
    for (const m of messages) {
        if (size > 0 && size + m.length > maxFrameBytes) close();
        batch.push(m);
        size += m.length;
    }
    if (size > 0) close();
    return frames;
}

// ============================================================================ delta

const CRC_TABLE = (() => {
    const table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
        let c = n;
        for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
        table[n] = c >>> 0;
    }
    return table;
})();

/** CRC-32 (IEEE 802.3, as zlib and PNG) of the bytes, unsigned. */
export function crc32(bytes) {
    let crc = 0xFFFFFFFF;
    for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xFF] ^ (crc >>> 8);
    return (crc ^ 0xFFFFFFFF) >>> 0;
}

const MAX_VARINT_BYTES = 5;

/** Reads an unsigned LEB128 varint at `pos`; returns [value, next position]. */
function readVarint(delta, pos, what) {
    let value = 0;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
        if (pos + i >= delta.length) throw new DeltaFormatError(`delta is truncated in its ${what}`);
        const b = delta[pos + i];
        value += (b & 0x7F) * 2 ** (7 * i); // not <<: 35 bits overflow 32-bit shifts
        if ((b & 0x80) === 0) {
            if (value > 0x7FFFFFFF) throw new DeltaFormatError(`the ${what} is out of range: ${value}`);
            if (i > 0 && b === 0) throw new DeltaFormatError(`the ${what} is an overlong varint`);
            return [value, pos + i + 1];
        }
    }
    throw new DeltaFormatError(`the ${what} is a varint longer than ${MAX_VARINT_BYTES} bytes`);
}

/**
 * Applies a Ringcast delta (docs/protocol.md, "Deltas") to `base` and returns the target.
 * Throws DeltaFormatError ("delta error: ...") for a delta for a base of another length, a
 * truncated one, an empty or overrunning instruction, a copy past the base, bytes left over, or a
 * checksum that does not match the rebuilt value.
 */
export function applyDelta(base, delta) {
    let pos = 0;
    let baseLength, targetLength;
    [baseLength, pos] = readVarint(delta, pos, 'base length');
    if (baseLength !== base.length) {
        throw new DeltaFormatError(`delta is for a base of ${baseLength} bytes, but the previous value has ${base.length}`);
    }
    [targetLength, pos] = readVarint(delta, pos, 'target length');
    // every instruction produces at least one byte from at least one delta byte or base byte: a
    // target longer than both together is a lie, refused before allocating it
    if (targetLength > delta.length * 64 + base.length * 64 + 64) {
        throw new DeltaFormatError(`target length ${targetLength} cannot come from a ${delta.length}-byte delta`);
    }
    const target = new Uint8Array(targetLength);
    let produced = 0;
    while (produced < targetLength) {
        let header, n;
        [header, pos] = readVarint(delta, pos, `instruction at byte ${pos}`);
        n = Math.floor(header / 2);
        if (n === 0) throw new DeltaFormatError(`empty instruction at byte ${pos}`);
        if (n > targetLength - produced) {
            throw new DeltaFormatError(`instruction of ${n} bytes overruns the target of ${targetLength} bytes `
                + `(${produced} already produced)`);
        }
        if (header % 2 === 0) {
            if (n > delta.length - pos) {
                throw new DeltaFormatError(`insert of ${n} bytes is truncated: ${delta.length - pos} bytes left in the delta`);
            }
            target.set(delta.subarray(pos, pos + n), produced);
            pos += n;
        } else {
            let offset;
            [offset, pos] = readVarint(delta, pos, 'copy offset');
            if (offset + n > base.length) {
                throw new DeltaFormatError(`copy of ${n} bytes at offset ${offset} overruns the ${base.length}-byte base`);
            }
            target.set(base.subarray(offset, offset + n), produced);
        }
        produced += n;
    }
    const left = delta.length - pos;
    if (left !== 4) {
        throw new DeltaFormatError(left < 4 ? 'delta is truncated: its checksum is missing'
            : `${left - 4} unexpected bytes after the last instruction`);
    }
    const expected = new DataView(delta.buffer, delta.byteOffset + pos, 4).getUint32(0);
    const actual = crc32(target);
    if (expected !== actual) {
        throw new DeltaFormatError(`checksum mismatch: delta says ${expected.toString(16)}, `
            + `the rebuilt value has ${actual.toString(16)}`);
    }
    return target;
}

// ============================================================================ paths and selectors

/** Whitespace and control characters (Java: isWhitespace, isSpaceChar, isISOControl), lone surrogates. */
const FORBIDDEN_CHAR = /[\p{Cc}\p{Z}\p{Cs}]/u;

const abbreviate = (text) => (text.length <= 80 ? text : text.slice(0, 77) + '...');

/**
 * Checks a topic path, or with `wildcards` a selector whose `+` and `#` segments are judged by the
 * caller, and returns its segments. Throws TypeError naming the rule broken and the text.
 */
function splitChecked(text, wildcards, what) {
    if (typeof text !== 'string' || text.length === 0) {
        throw new TypeError(`invalid ${what} '${text ?? ''}': must be a non-empty string`);
    }
    const segments = text.split('/');
    let index = 0;
    for (const segment of segments) {
        if (segment.length === 0) {
            throw new TypeError(`invalid ${what} '${abbreviate(text)}': empty segment at index ${index} `
                + `(leading, trailing or double '/')`);
        }
        const bad = FORBIDDEN_CHAR.exec(segment);
        if (bad) {
            const cp = bad[0].codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
            throw new TypeError(`invalid ${what} '${abbreviate(JSON.stringify(text).slice(1, -1))}': whitespace, `
                + `control character or unpaired surrogate U+${cp} at index ${index + bad.index}`);
        }
        if (!wildcards && /[+#]/.test(segment)) {
            throw new TypeError(`invalid ${what} '${abbreviate(text)}': '${segment.match(/[+#]/)[0]}' is a wildcard, `
                + `allowed only in selectors`);
        }
        index += segment.length + 1;
    }
    const bytes = utf8Encoder.encode(text).length;
    if (bytes > MAX_PATH_BYTES) {
        throw new TypeError(`invalid ${what} '${abbreviate(text)}': ${bytes} bytes, more than the limit of ${MAX_PATH_BYTES}`);
    }
    if (segments.length > MAX_PATH_DEPTH) {
        throw new TypeError(`invalid ${what} '${abbreviate(text)}': ${segments.length} segments, more than the limit `
            + `of ${MAX_PATH_DEPTH}`);
    }
    return segments;
}

/** Checks a topic path (no wildcards); returns its segments or throws TypeError naming the rule. */
function validatePath(path) {
    return splitChecked(path, false, 'path');
}

/** Parses a selector; returns its segments or throws TypeError naming the rule. */
function parseSelector(selector) {
    const segments = splitChecked(selector, true, 'selector');
    segments.forEach((s, i) => {
        if (/[+#]/.test(s) && s.length > 1) {
            throw new TypeError(`invalid selector '${selector}': segment '${s}' mixes a wildcard with other `
                + `characters; '+' and '#' must be whole segments`);
        }
        if (s === '#' && i !== segments.length - 1) {
            throw new TypeError(`invalid selector '${selector}': '#' must be the last segment`);
        }
    });
    return segments;
}

/** Whether selector segments match path segments: `+` one segment, `#` the parent and all below. */
function segmentsMatch(selector, path) {
    for (let i = 0; i < selector.length; i++) {
        if (selector[i] === '#') return path.length >= i;
        if (i >= path.length) return false;
        if (selector[i] !== '+' && selector[i] !== path[i]) return false;
    }
    return path.length === selector.length;
}

/** Whether a selector (string) matches a topic path (string). */
function matches(selector, path) {
    return segmentsMatch(selector.split('/'), path.split('/'));
}

// ============================================================================ client

const now = () => globalThis.performance?.now() ?? Date.now();
/**
 * A frame whose listeners hold the page's thread this long is a stall: the server's SLOW_CONSUMER
 * then waits behind the updates not read, and goes with the connection once its grace ends, so a
 * connection lost within STALL_MEMORY_MS of a stall is said to be most likely that.
 */
const STALL_MS = 1000;
const STALL_MEMORY_MS = 30_000;

/** Reports an exception thrown by application code without letting it break the connection. */
function reportListenerError(what, error) {
    globalThis.console?.error(`ringcast: ${what} threw`, error);
}

/** One value delivered to a subscription's `onUpdate`; shared by every subscription it goes to. */
class Update {
    constructor(topic, sequence, value, kind) {
        this.topic = topic;
        this.sequence = sequence;
        this.value = value;
        this.kind = kind;
    }
    /** The value decoded as UTF-8. */
    text() { return utf8Decoder.decode(this.value); }
    /** The value parsed as JSON. */
    json() { return JSON.parse(this.text()); }
}

/** The names of subscribe()'s third argument: callbacks, then the options sent in SUBSCRIBE. */
const SUBSCRIBE_CALLBACKS = Object.freeze(['onError', 'onUnmatched', 'onRemoved']);
const SUBSCRIBE_OPTION_NAMES = Object.freeze([...SUBSCRIBE_CALLBACKS, ...Object.keys(SUBSCRIBE_OPTION_KINDS)]);
/** The options that make a view (docs/protocol.md, "Views"); rewind and rewindSince only shape the reply. */
const VIEW_OPTIONS = Object.freeze(['maxRate', 'fields', 'filter']);

/**
 * Checks subscribe()'s third argument and splits it into its callbacks and the options block its
 * every SUBSCRIBE carries, encoded once here. Throws TypeError naming the option and the rule:
 * the codec's RangeErrors (a value out of range) become TypeErrors with the same message, so a bad
 * argument to subscribe() is a TypeError whatever is wrong with it, as for the selector.
 */
function subscribeSettings(options) {
    if (options === undefined || options === null) return { callbacks: {}, block: EMPTY, viewed: false };
    if (typeof options !== 'object' || Array.isArray(options)) {
        throw new TypeError(`subscribe options must be an object of ${SUBSCRIBE_OPTION_NAMES.join(', ')}`);
    }
    const callbacks = {};
    const sent = {};
    for (const [name, value] of Object.entries(options)) {
        if (!SUBSCRIBE_OPTION_NAMES.includes(name)) {
            throw new TypeError(`unknown subscribe option '${name}' (${SUBSCRIBE_OPTION_NAMES.join(', ')})`);
        }
        if (value === undefined) continue; // as if not given, as the codec takes it
        if (SUBSCRIBE_CALLBACKS.includes(name)) {
            if (typeof value !== 'function') throw new TypeError(`${name}: a function`);
            callbacks[name] = value;
        } else {
            sent[name] = value;
        }
    }
    let block;
    try {
        block = encodeSubscribeOptions(sent);
    } catch (e) {
        if (e instanceof RangeError) throw new TypeError(e.message, { cause: e });
        throw e;
    }
    return { callbacks, block, viewed: VIEW_OPTIONS.some((name) => Object.hasOwn(sent, name)) };
}

/** A subscription: receives updates of every topic its selector matches, across reconnects. */
class Subscription {
    #client;
    #onUpdate;
    #onError;
    #onUnmatched;
    #onRemoved;
    #resolve;
    #reject;

    constructor(client, id, selector, segments, onUpdate, settings) {
        this.#client = client;
        this.#onUpdate = onUpdate;
        this.#onError = settings.callbacks.onError;
        this.#onUnmatched = settings.callbacks.onUnmatched;
        this.#onRemoved = settings.callbacks.onRemoved;
        /** The selector as given. */
        this.selector = selector;
        /** The wire subscription id. */
        this.id = id;
        /** Resolves with the number of matching topics once the server confirmed the subscription. */
        this.confirmed = new Promise((resolve, reject) => { this.#resolve = resolve; this.#reject = reject; });
        // marks the rejection handled: an application that never looks at it must not get an
        // unhandled-rejection crash in Node when the client closes
        this.confirmed.catch(() => {});
        this._segments = segments;
        this._selectorBytes = utf8Encoder.encode(selector);
        this._closed = false;
        /** Confirmed on some session: re-sent with a resume list from then on. */
        this._confirmedOnce = false;
        /** The connection number on which it receives UPDATEs (after SUBSCRIBED, or at once when resumed). */
        this._liveConnection = -1;
        /** The connection number on which its SUBSCRIBE went out. */
        this._sentConnection = -1;
        /** Its options block, sent in its every SUBSCRIBE (empty: none). */
        this._optionsBlock = settings.block;
        /**
         * It has a view (maxRate, fields or filter): it receives only messages flagged VIEWED with
         * its view's id, and keeps its own last sequence and value per topic; a plain subscription
         * receives only messages without the flag and shares the client's per-topic state.
         */
        this._viewed = settings.viewed;
        /** Its view's id on the current connection, from the VIEW that starts each reply; null until then. */
        this._viewId = null;
        /**
         * topic record -> { sequence, value }: the last of the topic this subscription received
         * through its view (value null when none is held). Per subscription and topic, not per
         * view id, which can change across reconnects; its resume list and delta bases.
         */
        this._viewTopics = new Map();
    }

    /** Stops the subscription (UNSUBSCRIBE); no callback after this. Idempotent. */
    close() {
        if (this._closed) return;
        this._closed = true;
        this.#reject(new RingcastError(`subscription to '${this.selector}' closed before the server confirmed it`));
        this.#client._unsubscribe(this);
    }

    _confirm(matchedTopics) { this.#resolve(matchedTopics); }

    _deliver(update) {
        if (this._closed) return;
        try {
            this.#onUpdate(update);
        } catch (e) {
            reportListenerError(`onUpdate of subscription '${this.selector}'`, e);
        }
    }

    _unmatched(topic, sequence) {
        if (this._closed || !this.#onUnmatched) return;
        try {
            this.#onUnmatched(topic, sequence);
        } catch (e) {
            reportListenerError(`onUnmatched of subscription '${this.selector}'`, e);
        }
    }

    _removed(topic, lastSequence) {
        if (this._closed || !this.#onRemoved) return;
        try {
            this.#onRemoved(topic, lastSequence);
        } catch (e) {
            reportListenerError(`onRemoved of subscription '${this.selector}'`, e);
        }
    }

    /** An error the subscription survives (the connection ended with a fatal server error). */
    _notifyError(error) {
        if (this._closed || !this.#onError) return;
        try {
            this.#onError(error);
        } catch (e) {
            reportListenerError(`onError of subscription '${this.selector}'`, e);
        }
    }

    /** The server refused it: it is over. */
    _refused(error) {
        if (this._closed) return;
        this._notifyError(error);
        this._closed = true;
        this.#reject(error);
    }

    /** The client closed: it is over, without a callback. */
    _abandon(error) {
        this._closed = true;
        this.#reject(error);
    }
}

/**
 * One WebSocket attempt or session: its socket, alias map, timers and why it ended.
 * The client keeps at most one; events of an ended connection are ignored.
 */
class Connection {
    constructor(number, url, ws) {
        this.number = number;
        this.url = url;
        this.ws = ws;
        this.aliases = new Map();
        this.welcomed = false;
        this.ended = false;
        this.sessionId = null;
        this.maxFrameBytes = 0;
        this.pingIntervalMs = 0;
        this.fatalCode = null;
        this.fatalReason = null;
        this.localReason = null;
        this.lastWriteAt = now();
        this.lastReceivedAt = now();
        /** The last frame whose listeners held the page's thread STALL_MS or more: how long, and when it ended. */
        this.lastStallMs = 0;
        this.lastStallEndAt = 0;
        this.pingSentAt = -1;
        this.pingNonce = 0n;
        this.attemptTimer = null;
        this.pingTimer = null;
        this.checkTimer = null;
        this.retryFlushTimer = null;
    }

    clearTimers() {
        for (const t of ['attemptTimer', 'pingTimer', 'checkTimer', 'retryFlushTimer']) {
            clearTimeout(this[t]);
            this[t] = null;
        }
    }
}

/** A client of one or more Ringcast servers; create it with `connect()`. */
class RingcastClient {
    #urls;
    #options;
    #WebSocket;
    #state = 'connecting';
    #listeners = new Map([['state', new Set()], ['error', new Set()]]);
    #connection = null;
    #connectionCount = 0;
    #urlIndex = 0;
    #failedAttempts = 0;
    #everConnected = false;
    #connectDeadline;
    #connectPromise = null;
    #reconnectTimer = null;
    #closedError = null;
    #lastFailure = null;
    /** Open subscriptions by id. */
    #subscriptions = new Map();
    /** Bumped on every change to #subscriptions: topics cache their matching subscriptions per version. */
    #subscriptionsVersion = 0;
    #nextSubscriptionId = 1;
    /**
     * path -> { path, segments, pathBytes, incarnation, sequence, value, plainReceivers, plainMatches,
     * viewedMatches, matchesVersion }: the topics the client has heard of, until one is removed.
     */
    #topics = new Map();
    /**
     * Commands waiting for the next flush: publishes ('publish'), publishes to send again
     * ('republish') and removals not sent yet ('remove') survive a lost connection, the rest is
     * rebuilt. Every 'republish' comes before every 'publish' and 'remove', the 'republish' ones in
     * the order their publishes were first sent (request.sendOrder): a publisher's updates are
     * applied in its order, and publishes and removals in the order they were called.
     */
    #outbox = [];
    #flushScheduled = false;
    /** Sent publishes by correlation id, in send order (Map keeps insertion order). */
    #unacked = new Map();
    /** Correlation ids of the publishes waiting in #outbox to be sent again: never given to another. */
    #sendAgainIds = new Set();
    /**
     * Sent removals waiting for their REMOVED or ERROR, by correlation id (from the publish id space).
     * Never sent again: one whose connection is lost is rejected, its outcome unknown.
     */
    #pendingRemoves = new Map();
    #nextCorrelationId = FIRST_CORRELATION_ID;
    /** The send order the next publish first sent gets (request.sendOrder); a publish sent again keeps its own. */
    #nextSendOrder = 0;
    /**
     * Sent in HELLO on every connection: with it and correlation ids never reused, a publish whose
     * connection was lost before its ack is sent again (REPUBLISH) and applied once.
     */
    #publisherId = newPublisherId();
    #stats = { updatesReceived: 0, duplicatesDropped: 0, reconnects: 0, deltasApplied: 0, viewMessagesDropped: 0 };

    constructor(urls, options) {
        this.#urls = urls;
        const defaults = { clientName: 'ringcast-js', minReconnectDelayMs: 100, maxReconnectDelayMs: 5000,
            connectTimeoutMs: 10000, pongTimeoutMs: 20000, maxPingIntervalMs: 30000 };
        this.#options = {};
        for (const [key, value] of Object.entries(defaults)) {
            const given = options[key] ?? value; // an option passed as undefined takes its default
            if (key !== 'clientName' && !(Number.isFinite(given) && given >= 1)) {
                throw new TypeError(`option ${key} must be a number of at least 1, got ${given}`);
            }
            this.#options[key] = given;
        }
        this.#options.maxReconnectDelayMs = Math.max(this.#options.maxReconnectDelayMs, this.#options.minReconnectDelayMs);
        this.#WebSocket = options.WebSocket ?? globalThis.WebSocket;
        if (typeof this.#WebSocket !== 'function') {
            throw new Error('ringcast: no WebSocket implementation: pass options.WebSocket, or run Node 22+ '
                + '(Node 20: node --experimental-websocket)');
        }
        if (typeof options.onStateChange === 'function') this.on('state', options.onStateChange);
        const credentials = options.credentials;
        if (credentials !== undefined && credentials !== null) {
            const isToken = typeof credentials.token === 'string';
            const isPassword = typeof credentials.principal === 'string' && typeof credentials.password === 'string';
            if (isToken === isPassword) {
                throw new TypeError('option credentials must be { token } or { principal, password }');
            }
            this.#options.credentials = isToken ? { token: credentials.token }
                : { principal: credentials.principal, password: credentials.password };
        }
    }

    /** 'connecting' | 'connected' | 'reconnecting' | 'closed'. */
    get state() { return this.#state; }
    /** The session id from WELCOME, or null when not connected. */
    get sessionId() { return this.#connection?.welcomed ? this.#connection.sessionId : null; }
    /** The URL of the current connection or attempt. */
    get url() { return this.#connection?.url ?? this.#urls[Math.max(0, this.#urlIndex - 1) % this.#urls.length]; }
    /** Counters since the client was created (a copy). */
    get stats() { return { ...this.#stats }; }

    /** Adds a listener for 'state' or 'error'; returns a function that removes it. */
    on(event, listener) {
        const set = this.#listeners.get(event);
        if (!set) throw new TypeError(`unknown event '${event}': 'state' or 'error'`);
        set.add(listener);
        return () => set.delete(listener);
    }

    #emit(event, payload) {
        for (const listener of [...this.#listeners.get(event)]) {
            try {
                listener(payload);
            } catch (e) {
                reportListenerError(`'${event}' listener`, e);
            }
        }
    }

    #setState(state, reason = null, closeCode = 0) {
        this.#state = state;
        this.#emit('state', { state, url: this.url, sessionId: this.sessionId, reason, closeCode });
    }

    // -------------------------------------------------------------------- public operations

    /** Subscribes; see ringcast.d.ts. Throws TypeError for a bad selector or bad options. */
    subscribe(selector, onUpdate, options = undefined) {
        const segments = parseSelector(selector);
        if (typeof onUpdate !== 'function') throw new TypeError('subscribe needs an onUpdate function');
        const settings = subscribeSettings(options);
        if (this.#nextSubscriptionId > LAST_SUBSCRIPTION_ID) {
            throw new RingcastError(`subscription ids exhausted: ${LAST_SUBSCRIPTION_ID} made`);
        }
        const s = new Subscription(this, this.#nextSubscriptionId++, selector, segments, onUpdate, settings);
        if (this.#closedError) {
            s._abandon(this.#closedError);
            return s;
        }
        this.#subscriptions.set(s.id, s);
        this.#subscriptionsVersion++;
        if (this.#connection?.welcomed) this.#enqueue({ kind: 'subscribe', subscription: s });
        return s;
    }

    /** Called by Subscription.close(). */
    _unsubscribe(s) {
        if (this.#subscriptions.get(s.id) !== s) return; // refused, or the client closed
        this.#subscriptions.delete(s.id);
        this.#subscriptionsVersion++;
        if (this.#connection?.welcomed) this.#enqueue({ kind: 'unsubscribe', subscription: s });
    }

    /** Publishes; resolves with the topic sequence the server gave the update. See ringcast.d.ts. */
    publish(topic, value) {
        if (this.#closedError) return Promise.reject(this.#closedError);
        try {
            validatePath(topic);
        } catch (e) {
            return Promise.reject(new RingcastError(e.message, 'INVALID_PATH'));
        }
        let bytes;
        if (typeof value === 'string') bytes = utf8Encoder.encode(value);
        else if (value instanceof Uint8Array) bytes = value;
        else if (value instanceof ArrayBuffer) bytes = new Uint8Array(value);
        else if (ArrayBuffer.isView(value)) bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
        else return Promise.reject(new TypeError('publish value must be a string, Uint8Array or ArrayBuffer'));
        const pathBytes = utf8Encoder.encode(topic);
        const request = { topic, pathBytes, value: bytes, messageBytes: HEADER_BYTES + 4 + 2 + pathBytes.length + bytes.length };
        const promise = new Promise((resolve, reject) => { request.resolve = resolve; request.reject = reject; });
        const c = this.#connection;
        if (c?.welcomed && request.messageBytes > c.maxFrameBytes) {
            request.reject(this.#tooLarge(request, c.maxFrameBytes));
        } else {
            this.#enqueue({ kind: 'publish', request });
        }
        return promise;
    }

    /**
     * Removes the topics the selector matches that this client may publish to; resolves with how
     * many the server removed. See ringcast.d.ts.
     */
    remove(selector) {
        if (this.#closedError) return Promise.reject(this.#closedError);
        try {
            parseSelector(selector);
        } catch (e) {
            return Promise.reject(new RingcastError(e.message, 'INVALID_SELECTOR'));
        }
        const selectorBytes = utf8Encoder.encode(selector);
        const request = { selector, selectorBytes, messageBytes: HEADER_BYTES + 4 + 2 + selectorBytes.length };
        const promise = new Promise((resolve, reject) => { request.resolve = resolve; request.reject = reject; });
        const c = this.#connection;
        if (c?.welcomed && request.messageBytes > c.maxFrameBytes) {
            request.reject(this.#removeTooLarge(request, c.maxFrameBytes));
        } else {
            this.#enqueue({ kind: 'remove', request });
        }
        return promise;
    }

    /** Closes the client: socket closed with 1000, everything pending rejected. Idempotent. */
    close() {
        if (this.#closedError) return;
        const error = this.#closedError = new RingcastError('client closed', null, CLOSE_NORMAL);
        clearTimeout(this.#reconnectTimer);
        const c = this.#connection;
        if (c) {
            c.ended = true;
            c.clearTimers();
            this.#connection = null;
            try { c.ws.close(CLOSE_NORMAL, 'client closed'); } catch { /* already closing */ }
        }
        for (const request of this.#takeUnacked()) request.reject(error);
        for (const request of this.#pendingRemoves.values()) request.reject(error);
        this.#pendingRemoves.clear();
        for (const cmd of this.#outbox) if (outlivesConnection(cmd)) cmd.request.reject(error);
        this.#outbox = [];
        this.#sendAgainIds.clear();
        for (const s of this.#subscriptions.values()) s._abandon(error);
        this.#subscriptions.clear();
        this.#subscriptionsVersion++;
        this.#connectPromise?.reject(error);
        this.#setState('closed', 'client closed', CLOSE_NORMAL);
    }

    // -------------------------------------------------------------------- connecting

    /** Starts connecting; resolves on the first WELCOME. Called once, by connect(). */
    _start() {
        this.#connectDeadline = now() + this.#options.connectTimeoutMs;
        const promise = new Promise((resolve, reject) => { this.#connectPromise = { resolve, reject }; });
        this.#attempt();
        return promise;
    }

    #attempt() {
        this.#reconnectTimer = null;
        if (this.#closedError) return;
        let limitMs = this.#options.connectTimeoutMs;
        if (!this.#everConnected) {
            limitMs = Math.min(limitMs, this.#connectDeadline - now());
            if (limitMs < 1) {
                this.#giveUp();
                return;
            }
        }
        const url = this.#urls[this.#urlIndex++ % this.#urls.length];
        let ws;
        try {
            ws = new this.#WebSocket(url);
        } catch (e) {
            this.#connection = null;
            this.#attemptFailed(new RingcastError(`cannot open ${url}: ${e.message}`, null, 0, { cause: e }));
            return;
        }
        const c = new Connection(++this.#connectionCount, url, ws);
        this.#connection = c;
        ws.binaryType = 'arraybuffer';
        ws.onopen = () => {
            if (c.ended) return;
            // HELLO alone; nothing else until WELCOME
            this.#send(c, encodeHello(this.#options.clientName, PROTOCOL_VERSION, this.#options.credentials,
                this.#publisherId, c.number));
        };
        ws.onmessage = (event) => this.#onFrame(c, event.data);
        ws.onerror = (event) => {
            // browsers fire close right after error, in the same task; Node 20's WebSocket fires
            // only error when it cannot connect: end the attempt on the next turn unless close did
            const detail = typeof event?.message === 'string' && event.message ? `: ${event.message}` : '';
            setTimeout(() => this.#ended(c, 1006, `WebSocket error${detail}`), 0);
        };
        ws.onclose = (event) => this.#ended(c, event.code, event.reason);
        limitMs = Math.round(limitMs);
        c.attemptTimer = setTimeout(() => this.#fail(c, `no WELCOME from the server within ${limitMs} ms`,
            CLOSE_LOCAL_FAILURE), limitMs);
    }

    /** Ends a connection for a reason found on this side; the first reason wins. */
    #fail(c, reason, closeCode, shortReason = reason) {
        if (c.ended) return;
        c.localReason = reason;
        // a dead connection's close event can take minutes (the closing handshake has to time
        // out): move on at once and ignore whatever the old socket does later
        try { c.ws.close(closeCode, utf8Clip(shortReason, 123)); } catch { /* not open yet, or closing */ }
        this.#ended(c, closeCode, '');
    }

    /** A connection or attempt ended: detach, tell, and schedule the next attempt. */
    #ended(c, closeCode, closeReason) {
        if (c.ended) return;
        c.ended = true;
        c.clearTimers();
        if (this.#connection === c) this.#connection = null;
        const error = this.#describeEnd(c, closeCode, closeReason);
        this.#rejectUnansweredRemoves(error);
        if (c.welcomed) {
            // sent and not acked, so maybe applied: sent again first on the next session, with the
            // same correlation id, for the server to apply once; the rest of what was waiting is
            // rebuilt there, only publishes carry over
            const unacked = this.#takeUnacked();
            for (const request of unacked) this.#sendAgainIds.add(request.correlationId);
            // all sent again before any first sent; those sent again (unacked here, or refused by a
            // cluster node and waiting) in the order they were first sent, whichever way they came
            // back: one refused may have been sent before one unacked, or after it
            const waiting = this.#outbox.filter((cmd) => cmd.kind === 'republish').map((cmd) => cmd.request);
            const sendAgain = mergeBySendOrder(unacked, waiting).map((request) => ({ kind: 'republish', request }));
            this.#outbox = [...sendAgain, ...this.#outbox.filter((cmd) => cmd.kind === 'publish' || cmd.kind === 'remove')];
            if (c.fatalCode !== null) for (const s of [...this.#subscriptions.values()]) s._notifyError(error);
            this.#setState('reconnecting', error.message, error.closeCode);
        }
        this.#attemptFailed(error);
    }

    /**
     * The connection that carried the removals still unanswered is gone: each may or may not have
     * been applied. Rejected, not sent again: a second REMOVE would also remove a topic created
     * again since the first.
     */
    #rejectUnansweredRemoves(error) {
        for (const request of this.#pendingRemoves.values()) {
            request.reject(new RingcastError(`removal of '${request.selector}' unanswered: the connection was lost `
                + `after it was sent, so it may or may not have been applied (${error.message})`, null,
            error.closeCode, { cause: error }));
        }
        this.#pendingRemoves.clear();
    }

    #describeEnd(c, closeCode, closeReason) {
        if (c.fatalCode !== null) {
            const name = ERROR_NAMES.get(c.fatalCode);
            const code = closeCode || FATAL_CLOSE_CODES.get(c.fatalCode) || 0;
            return new RingcastError(`server ended the session: ${name ?? 'error ' + c.fatalCode}: ${c.fatalReason}`,
                name ?? null, code);
        }
        if (c.localReason !== null) return new RingcastError(c.localReason, null, closeCode);
        const detail = closeReason ? ` (${closeReason})` : '';
        if (c.welcomed && c.lastStallMs > 0 && now() - c.lastStallEndAt < STALL_MEMORY_MS) {
            return new RingcastError('connection lost, most likely closed by the server as a slow consumer (SLOW_CONSUMER, '
                + 'which could not reach this client behind the updates it did not read): the listeners held the '
                + `page's thread for ${Math.round(c.lastStallMs)} ms, reading nothing meanwhile, and a server closes a `
                + 'session that falls limits.outboundQueueBytes behind once limits.slowConsumerCloseGraceMs (5 s by '
                + `default) pass; return from listeners sooner, or let the server conflate: WebSocket close code ${closeCode}`
                + detail, null, closeCode);
        }
        const what = c.welcomed ? 'connection lost' : 'connection closed before the session started';
        return new RingcastError(`${what}: WebSocket close code ${closeCode}${detail}`, null, closeCode);
    }

    #attemptFailed(error) {
        this.#lastFailure = error;
        if (this.#closedError) return;
        // the same credentials would be refused again: connect() rejects now, with the reason
        if (!this.#everConnected && (now() >= this.#connectDeadline || error.code === 'AUTHENTICATION_FAILED')) {
            this.#giveUp();
            return;
        }
        const { minReconnectDelayMs: minMs, maxReconnectDelayMs: maxMs } = this.#options;
        // equal jitter: clients that lost the same server spread out, yet none retries much sooner
        const ceiling = Math.min(maxMs, minMs * 2 ** Math.min(this.#failedAttempts, 30));
        this.#failedAttempts++;
        let delayMs = ceiling / 2 + Math.random() * (ceiling / 2);
        if (!this.#everConnected) delayMs = Math.min(delayMs, Math.max(0, this.#connectDeadline - now()));
        this.#reconnectTimer = setTimeout(() => this.#attempt(), delayMs);
    }

    /** connect() found no address within connectTimeoutMs: it rejects and the client closes. */
    #giveUp() {
        const last = this.#lastFailure;
        const refused = last?.code === 'AUTHENTICATION_FAILED';
        const error = new RingcastError(refused ? `could not connect to ${this.#urls.join(', ')}: ${last.message}`
            : `could not connect to ${this.#urls.join(', ')} within `
            + `${this.#options.connectTimeoutMs} ms${last ? '; last failure: ' + last.message : ''}`,
            last?.code ?? null, last?.closeCode ?? 0, { cause: last ?? undefined });
        this.#connectPromise.reject(error);
        this.#connectPromise = null;
        this.close();
    }

    // -------------------------------------------------------------------- inbound

    #onFrame(c, data) {
        if (c.ended) return;
        c.lastReceivedAt = now();
        if (typeof data === 'string') {
            this.#protocolError(c, new ProtocolError('TEXT_FRAME_NOT_SUPPORTED',
                'the server sent a text frame; Ringcast uses binary frames only'));
            return;
        }
        const start = now();
        try {
            decodeFrame(new Uint8Array(data), (message) => {
                if (!c.ended) this.#onMessage(c, message);
            });
        } catch (e) {
            if (!(e instanceof ProtocolError)) throw e;
            if (!c.ended) this.#protocolError(c, e);
        }
        const end = now();
        if (end - start >= STALL_MS) {
            c.lastStallMs = end - start;
            c.lastStallEndAt = end;
        }
    }

    /** A protocol problem on this side: reported, and the connection ends (then resumes). */
    #protocolError(c, e, shortReason = 'protocol error') {
        this.#emit('error', new RingcastError(`bad message from the server: ${e.code}: ${e.message}`, e.code));
        this.#fail(c, `bad message from the server: ${e.code}: ${e.message}`, CLOSE_PROTOCOL_ERROR, shortReason);
    }

    #onMessage(c, m) {
        if (m.type === 'ERROR') {
            this.#onError(c, m);
            return;
        }
        if (!c.welcomed && m.type !== 'WELCOME') {
            throw new ProtocolError('HANDSHAKE_REQUIRED', `${m.type} before WELCOME`);
        }
        const viewed = m.viewId !== undefined; // VIEW, UNMATCHED, or a SNAPSHOT or UPDATE flagged VIEWED
        switch (m.type) {
            case 'WELCOME': return this.#onWelcome(c, m);
            case 'TOPIC': return this.#onTopic(c, m);
            case 'TOPIC_REMOVED': return this.#onTopicRemoved(c, m);
            case 'REMOVED': {
                const request = this.#pendingRemoves.get(m.correlationId);
                if (request) {
                    this.#pendingRemoves.delete(m.correlationId);
                    request.resolve(m.removedTopics);
                }
                this.#leaveMinorityNodeOnceAnswered(c);
                return;
            }
            case 'SNAPSHOT': {
                const t = this.#aliased(c, m);
                return viewed ? this.#onViewedSnapshot(t, m) : this.#onSnapshot(t, m);
            }
            case 'UPDATE': {
                const t = this.#aliased(c, m);
                return viewed ? this.#onViewedUpdate(c, t, m) : this.#onUpdate(c, t, m);
            }
            case 'VIEW': return this.#onView(m);
            case 'UNMATCHED': return this.#onUnmatched(this.#aliased(c, m), m);
            case 'PUBLISH_ACK': {
                const request = this.#unacked.get(m.correlationId);
                if (request) {
                    this.#unacked.delete(m.correlationId);
                    request.resolve(m.sequence);
                    this.#scheduleFlush(); // room in the window for a publish that waited
                }
                this.#leaveMinorityNodeOnceAnswered(c);
                return;
            }
            case 'SUBSCRIBED': {
                const s = this.#subscriptions.get(m.subscriptionId);
                if (s?._viewed && s._viewId === null) {
                    this.#refuseUnservedView(c, s);
                } else if (s) {
                    s._confirmedOnce = true;
                    s._liveConnection = c.number;
                    s._confirm(m.matchedTopics);
                }
                return;
            }
            case 'PONG': return; // receiving it is the point: lastReceivedAt moved
        }
    }

    #onWelcome(c, m) {
        if (c.welcomed) throw new ProtocolError('MALFORMED_FRAME', 'a second WELCOME on one session');
        if (m.version !== PROTOCOL_VERSION) {
            throw new ProtocolError('UNSUPPORTED_VERSION', `WELCOME for protocol version ${m.version}, `
                + `the client speaks ${PROTOCOL_VERSION}`);
        }
        if (m.maxFrameBytes < MIN_SERVER_FRAME_BYTES) {
            throw new ProtocolError('MALFORMED_FRAME', `WELCOME states maxFrameBytes ${m.maxFrameBytes}, `
                + `below the least usable ${MIN_SERVER_FRAME_BYTES}`);
        }
        clearTimeout(c.attemptTimer);
        c.attemptTimer = null;
        c.welcomed = true;
        c.sessionId = m.sessionId;
        c.maxFrameBytes = m.maxFrameBytes;
        this.#failedAttempts = 0;
        const wasConnected = this.#everConnected;
        this.#everConnected = true;
        if (wasConnected) this.#stats.reconnects++;
        // every open subscription first (in the order they were made, resume lists built at send
        // time), then the publishes that waited, keeping their order: those sent again (unacked
        // when the last session ended, or refused by a cluster node), in the order they were first
        // sent (#ended merged them so), then those made meanwhile, with the removals among them
        const resend = [...this.#subscriptions.values()].sort((a, b) => a.id - b.id)
            .map((subscription) => ({ kind: 'subscribe', subscription }));
        this.#outbox = [...resend, ...this.#outbox.filter(outlivesConnection)];
        this.#flush();
        if (m.idleTimeoutMs > 0) {
            c.pingIntervalMs = Math.max(1, Math.min(Math.floor(m.idleTimeoutMs / 3), this.#options.maxPingIntervalMs));
            this.#schedulePing(c, c.pingIntervalMs);
        }
        this.#setState('connected');
        if (this.#connectPromise) {
            this.#connectPromise.resolve(this);
            this.#connectPromise = null;
        }
    }

    /**
     * After a NO_MAJORITY or REPLICATION_TIMEOUT: once the node has answered every publish and
     * removal sent to it, move to the next address (the server refuses every later publish of the
     * session anyway).
     */
    #leaveMinorityNodeOnceAnswered(c) {
        if (c.leavingMinority && this.#unacked.size === 0 && this.#pendingRemoves.size === 0) {
            this.#fail(c, 'the node is on the minority side of a split', CLOSE_NORMAL, 'minority node');
        }
    }

    #onError(c, m) {
        const name = ERROR_NAMES.get(m.code) ?? null;
        if (isFatalCode(m.code)) {
            if (c.fatalCode === null) { // the first fatal error is the reason; the server closes after it
                c.fatalCode = m.code;
                c.fatalReason = m.reason;
            }
            return;
        }
        const error = new RingcastError(`${name ?? 'error ' + m.code}: ${m.reason}`, name);
        if (m.correlationId >= FIRST_CORRELATION_ID) {
            const request = this.#unacked.get(m.correlationId);
            if (request) {
                this.#unacked.delete(m.correlationId);
                const clusterRefusal = name === 'NO_MAJORITY' || name === 'REPLICATION_TIMEOUT';
                request.minorityRefusals = (request.minorityRefusals ?? 0) + (clusterRefusal ? 1 : 0);
                if (clusterRefusal && request.minorityRefusals < this.#urls.length) {
                    // NO_MAJORITY: a cluster node on the minority side of a split applied nothing.
                    // REPLICATION_TIMEOUT: its entry was not committed in time, so the outcome is
                    // unknown (it may yet be applied, or never). Either way the node refuses the
                    // session's later publishes: send it again through the next address, once this
                    // node has answered the others, as REPUBLISH with its id, which tells: the
                    // replicated ledger applies a (publisher id, correlation id) once, and acks one
                    // already applied with its sequence (an earlier send may have been applied too).
                    // In the order the publishes were first sent, whatever order the refusals come in
                    this.#sendAgainIds.add(request.correlationId);
                    this.#insertRepublish(request);
                    c.leavingMinority = true;
                    this.#leaveMinorityNodeOnceAnswered(c);
                    return;
                }
                request.reject(error);
                this.#scheduleFlush();
                this.#leaveMinorityNodeOnceAnswered(c);
                return;
            }
            const removal = this.#pendingRemoves.get(m.correlationId);
            if (removal) {
                // not sent again, even after NO_MAJORITY: the caller decides
                this.#pendingRemoves.delete(m.correlationId);
                removal.reject(error);
                this.#leaveMinorityNodeOnceAnswered(c);
                return;
            }
        } else if (m.correlationId !== 0) {
            const s = this.#subscriptions.get(m.correlationId);
            if (s) {
                this.#subscriptions.delete(s.id);
                this.#subscriptionsVersion++;
                s._refused(error);
                return;
            }
        }
        if (name === null && c.fatalCode === null) {
            // an unknown code naming nothing: fatal if the connection then closes (protocol.md, "Errors")
            c.fatalCode = m.code;
            c.fatalReason = m.reason;
        }
    }

    /**
     * The topic with this path, known from now on until it is removed. `incarnation` is 0 while
     * not known; `plainReceivers` holds the plain subscriptions it was delivered to (those told
     * when it is removed); `removed` marks a record forgotten, which no message may name again.
     */
    #topic(path) {
        let t = this.#topics.get(path);
        if (!t) {
            t = { path, segments: path.split('/'), pathBytes: utf8Encoder.encode(path), incarnation: 0, sequence: 0,
                value: null, plainReceivers: new WeakSet(), removed: false, plainMatches: [], viewedMatches: [],
                matchesVersion: -1 };
            this.#topics.set(path, t);
        }
        return t;
    }

    #aliased(c, m) {
        const t = c.aliases.get(m.alias);
        if (!t || t.removed) {
            throw new ProtocolError('MALFORMED_FRAME', `${m.type} names alias ${m.alias}, which no TOPIC announced`
                + (t ? ` (its topic ${t.path} was removed)` : ''));
        }
        return t;
    }

    /**
     * TOPIC: names the alias's topic on this connection. Of a path the client knows under another
     * incarnation (both known, not 0), the topic the client had was removed while it was away: the
     * subscriptions that had it are told, its state is forgotten, and the new topic starts from
     * nothing, so its updates from #1 are delivered. Incarnation 0 (a server that sends none)
     * leaves the one known as it is.
     */
    #onTopic(c, m) {
        let t = this.#topics.get(m.path);
        if (t && m.incarnation !== 0 && t.incarnation !== 0 && m.incarnation !== t.incarnation) {
            this.#topicRemoved(c, t, null, this.#lastKnownSequence(t));
            t = undefined;
        }
        t ??= this.#topic(m.path);
        if (m.incarnation !== 0) t.incarnation = m.incarnation;
        c.aliases.set(m.alias, t);
    }

    /**
     * TOPIC_REMOVED: the alias's topic was removed after its update `lastSequence`. Ignored for an
     * alias the connection does not know or has already forgotten: it comes once per view of the
     * topic the session receives.
     */
    #onTopicRemoved(c, m) {
        const t = c.aliases.get(m.alias);
        if (!t || t.removed) return;
        this.#topicRemoved(c, t, m.alias, m.lastSequence);
    }

    /**
     * Forgets a removed topic (its alias on this connection, its sequence, incarnation and value, and
     * what each subscription with a view holds of it), then calls onRemoved of every open subscription
     * that matches it and had received it, plain or through its view, once each, in the order they
     * were made. The topic's next incarnation is a new topic to the client.
     */
    #topicRemoved(c, t, alias, lastSequence) {
        this.#refreshMatches(t);
        const told = [...t.plainMatches.filter((s) => t.plainReceivers.has(s)),
            ...t.viewedMatches.filter((s) => s._viewTopics.has(t))].sort((a, b) => a.id - b.id);
        t.removed = true;
        if (this.#topics.get(t.path) === t) this.#topics.delete(t.path);
        if (alias !== null) c.aliases.delete(alias);
        for (const s of t.viewedMatches) s._viewTopics.delete(t);
        for (const s of told) s._removed(t.path, lastSequence);
    }

    /** The newest sequence the client has of the topic: its plain one, or one of a view's, if newer. */
    #lastKnownSequence(t) {
        let sequence = t.sequence;
        for (const s of this.#refreshMatches(t).viewedMatches) sequence = Math.max(sequence, s._viewTopics.get(t)?.sequence ?? 0);
        return sequence;
    }

    /**
     * The open subscriptions matching the topic, plain and viewed apart, cached on the topic until
     * the subscriptions change; returns the topic.
     */
    #refreshMatches(t) {
        if (t.matchesVersion !== this.#subscriptionsVersion) {
            t.plainMatches = [];
            t.viewedMatches = [];
            for (const s of this.#subscriptions.values()) {
                if (segmentsMatch(s._segments, t.segments)) (s._viewed ? t.viewedMatches : t.plainMatches).push(s);
            }
            t.matchesVersion = this.#subscriptionsVersion;
        }
        return t;
    }

    /** The open plain subscriptions matching the topic: those a message without VIEWED goes to. */
    #plainMatching(t) {
        return this.#refreshMatches(t).plainMatches;
    }

    /** The open subscriptions matching the topic whose view has, on this connection, this id. */
    #viewedMatching(t, viewId) {
        return this.#refreshMatches(t).viewedMatches.filter((s) => s._viewId === viewId);
    }

    /**
     * SNAPSHOT without VIEWED: to the plain subscription it names, or with id 0 (a GAP) to every
     * matching plain one. Always delivered, and it sets the topic's sequence even backwards: a
     * restarted server starts over.
     */
    #onSnapshot(t, m) {
        this.#stats.updatesReceived++;
        const named = m.subscriptionId === 0 ? null : this.#subscriptions.get(m.subscriptionId);
        if (named?._viewed) return; // not its stream: it gets its topics through its view only
        const gap = (m.flags & Flags.GAP) !== 0;
        const noValue = gap && (m.flags & Flags.NO_VALUE) !== 0;
        const value = noValue ? EMPTY : m.value;
        t.sequence = m.sequence;
        t.value = noValue ? null : value;
        const kind = noValue ? UpdateKind.GAP_WITHOUT_VALUE : gap ? UpdateKind.SNAPSHOT_AFTER_GAP : UpdateKind.SNAPSHOT;
        const update = new Update(t.path, m.sequence, value, kind);
        if (m.subscriptionId === 0) {
            for (const s of this.#plainMatching(t)) {
                t.plainReceivers.add(s);
                s._deliver(update);
            }
        } else if (named) {
            t.plainReceivers.add(named);
            named._deliver(update);
        }
    }

    /**
     * UPDATE without VIEWED, for the plain subscriptions: dropped unless newer than the topic's
     * sequence; a delta is applied first.
     */
    #onUpdate(c, t, m) {
        this.#stats.updatesReceived++;
        if (m.sequence <= t.sequence) {
            this.#stats.duplicatesDropped++;
            return;
        }
        let value = m.value;
        if ((m.flags & Flags.DELTA) !== 0) {
            try {
                if (t.value === null || t.sequence !== m.sequence - 1) {
                    throw new DeltaFormatError(`it does not follow the value the client has (#${t.sequence}`
                        + `${t.value === null ? ', none kept' : ''})`);
                }
                value = applyDelta(t.value, m.value);
            } catch (e) {
                if (!(e instanceof DeltaFormatError)) throw e;
                // never delivered: the connection ends and the next session resumes from the last good value
                this.#protocolError(c, new ProtocolError('MALFORMED_FRAME', `bad delta for ${t.path} #${m.sequence}: `
                    + e.message), 'bad delta');
                return;
            }
            this.#stats.deltasApplied++;
        }
        t.sequence = m.sequence;
        t.value = value;
        const kind = (m.flags & Flags.CONFLATED) !== 0 ? UpdateKind.CONFLATED : UpdateKind.UPDATE;
        let update = null;
        for (const s of this.#plainMatching(t)) {
            if (s._liveConnection === c.number) {
                t.plainReceivers.add(s);
                s._deliver(update ??= new Update(t.path, m.sequence, value, kind));
            }
        }
    }

    // Views (docs/protocol.md, "Views"). A subscription with a view learns its view's id from the
    // VIEW that starts each reply to its SUBSCRIBE, and takes the messages flagged VIEWED with that
    // id; it keeps its own last sequence and value per topic, since sequences through a view jump
    // by design (no gap is ever reported) and its values are the view's (projections), not the
    // topic's. A message for a view or subscription no open subscription has crossed an
    // UNSUBSCRIBE: dropped, and counted.

    #onView(m) {
        const s = this.#subscriptions.get(m.subscriptionId);
        if (!s?._viewed) { // closed or refused meanwhile; or a plain one, whose stream is without VIEWED
            this.#stats.viewMessagesDropped++;
            return;
        }
        s._viewId = m.viewId;
    }

    /**
     * SUBSCRIBED for a subscription with a view, without the VIEW that starts every reply to one: a
     * server from before views skipped the options and opened a plain subscription, whose messages
     * never reach a viewed one. Refused here, rather than left to receive nothing, and unsubscribed.
     */
    #refuseUnservedView(c, s) {
        this.#subscriptions.delete(s.id);
        this.#subscriptionsVersion++;
        this.#enqueue({ kind: 'unsubscribe', subscription: s });
        s._refused(new RingcastError(`INVALID_OPTIONS: ${c.url} confirmed the subscription to '${s.selector}' `
            + 'without a VIEW: this server does not serve maxRate, fields or filter', 'INVALID_OPTIONS'));
    }

    /**
     * Whether a message through a view of sequence `sequence` is news to subscription `s` (above the
     * last sequence it received of the topic); counts it as a duplicate when not.
     */
    #newToView(s, t, sequence) {
        const held = s._viewTopics.get(t);
        if (held === undefined || sequence > held.sequence) return true;
        this.#stats.duplicatesDropped++;
        return false;
    }

    /**
     * SNAPSHOT with VIEWED: to the subscription it names when that one has the view, or with id 0 to
     * every matching subscription with the view. Dropped by a subscription that already has the
     * sequence (after a resume), except with GAP, which is delivered and sets the subscription's
     * sequence even backwards, as for a plain one: a restarted server starts over.
     */
    #onViewedSnapshot(t, m) {
        this.#stats.updatesReceived++;
        const named = m.subscriptionId === 0 ? null : this.#subscriptions.get(m.subscriptionId);
        const targets = m.subscriptionId === 0 ? this.#viewedMatching(t, m.viewId)
            : named?._viewId === m.viewId ? [named] : [];
        if (targets.length === 0) {
            this.#stats.viewMessagesDropped++;
            return;
        }
        const gap = (m.flags & Flags.GAP) !== 0;
        const noValue = gap && (m.flags & Flags.NO_VALUE) !== 0;
        const value = noValue ? EMPTY : m.value;
        const kind = noValue ? UpdateKind.GAP_WITHOUT_VALUE : gap ? UpdateKind.SNAPSHOT_AFTER_GAP : UpdateKind.SNAPSHOT;
        const update = new Update(t.path, m.sequence, value, kind);
        for (const s of targets) {
            if (!gap && !this.#newToView(s, t, m.sequence)) continue;
            s._viewTopics.set(t, { sequence: m.sequence, value: noValue ? null : value });
            s._deliver(update);
        }
    }

    /**
     * UPDATE with VIEWED: to every matching subscription with the view that does not have its
     * sequence yet. A DELTA is applied to the value each subscription holds of the topic through
     * its view (once per distinct base); one that cannot be is never delivered to any of them and
     * ends the connection, as a bad plain delta does.
     */
    #onViewedUpdate(c, t, m) {
        this.#stats.updatesReceived++;
        const targets = this.#viewedMatching(t, m.viewId);
        if (targets.length === 0) {
            this.#stats.viewMessagesDropped++;
            return;
        }
        const delta = (m.flags & Flags.DELTA) !== 0;
        const rebuilt = new Map(); // base -> value: subscriptions holding the same value share one application
        const values = new Map(); // subscription -> the value it gets
        for (const s of targets) {
            if (!this.#newToView(s, t, m.sequence)) continue;
            if (!delta) {
                values.set(s, m.value);
                continue;
            }
            const base = s._viewTopics.get(t)?.value ?? null;
            let value = rebuilt.get(base);
            if (value === undefined) {
                try {
                    if (base === null) {
                        throw new DeltaFormatError(`subscription '${s.selector}' holds no value of the topic `
                            + 'through the view');
                    }
                    value = applyDelta(base, m.value);
                } catch (e) {
                    if (!(e instanceof DeltaFormatError)) throw e;
                    // never delivered: the connection ends and the next session resumes from the last good value
                    this.#protocolError(c, new ProtocolError('MALFORMED_FRAME', `bad delta for ${t.path} `
                        + `#${m.sequence} through view ${m.viewId}: ${e.message}`), 'bad delta');
                    return;
                }
                rebuilt.set(base, value);
                this.#stats.deltasApplied++;
            }
            values.set(s, value);
        }
        const kind = (m.flags & Flags.CONFLATED) !== 0 ? UpdateKind.CONFLATED : UpdateKind.UPDATE;
        const updates = new Map(); // value -> Update: one object per distinct value, as for plain updates
        for (const [s, value] of values) {
            s._viewTopics.set(t, { sequence: m.sequence, value });
            let update = updates.get(value);
            if (update === undefined) updates.set(value, update = new Update(t.path, m.sequence, value, kind));
            s._deliver(update);
        }
    }

    /**
     * UNMATCHED: the topic's value of `sequence` no longer passes the view's filter. Each matching
     * subscription with the view that does not have the sequence yet records it (its resume list
     * says so) and hears of it through onUnmatched; it keeps the value it holds as the base of a
     * later delta.
     */
    #onUnmatched(t, m) {
        const targets = this.#viewedMatching(t, m.viewId);
        if (targets.length === 0) {
            this.#stats.viewMessagesDropped++;
            return;
        }
        for (const s of targets) {
            if (!this.#newToView(s, t, m.sequence)) continue;
            s._viewTopics.set(t, { sequence: m.sequence, value: s._viewTopics.get(t)?.value ?? null });
            s._unmatched(t.path, m.sequence);
        }
    }

    // -------------------------------------------------------------------- outbound

    #enqueue(command) {
        this.#outbox.push(command);
        this.#scheduleFlush();
    }

    /**
     * Puts a publish to send again among the 'republish' commands of #outbox, in the order the
     * publishes were first sent, before every 'publish' and 'remove' (never flushed before those: a
     * flush takes the outbox in order, and the connection is being left).
     */
    #insertRepublish(request) {
        let at = this.#outbox.findIndex((cmd) => cmd.kind === 'publish' || cmd.kind === 'remove'
            || (cmd.kind === 'republish' && cmd.request.sendOrder > request.sendOrder));
        if (at < 0) at = this.#outbox.length;
        this.#outbox.splice(at, 0, { kind: 'republish', request });
    }

    #scheduleFlush() {
        if (!this.#flushScheduled && this.#outbox.length > 0 && this.#connection?.welcomed) {
            this.#flushScheduled = true;
            // one flush per turn of the event loop: the calls of one task share frames
            queueMicrotask(() => {
                this.#flushScheduled = false;
                this.#flush();
            });
        }
    }

    /** Encodes what waits into as few frames as maxFrameBytes allows and sends them. */
    #flush() {
        const c = this.#connection;
        while (c?.welcomed && !c.ended && !c.leavingMinority && c.retryFlushTimer === null && this.#outbox.length > 0) {
            if (c.ws.bufferedAmount > MAX_BUFFERED_FRAMES * c.maxFrameBytes) {
                // a WebSocket has no drain event: poll until the socket has room again
                c.retryFlushTimer = setTimeout(() => { c.retryFlushTimer = null; this.#flush(); }, BACKPRESSURE_RETRY_MS);
                return;
            }
            // about a frame's worth at a time, taken off the outbox before sending: a failed send
            // ends the connection, which keeps the publishes still in the outbox and sends those
            // taken (unacked by then, sent or not) again on the next session
            const messages = [];
            let bytes = 0;
            let taken = 0;
            while (taken < this.#outbox.length && bytes < c.maxFrameBytes
                && !(this.#outbox[taken].kind === 'publish' && this.#unacked.size >= PUBLISH_WINDOW)) {
                const m = this.#encode(c, this.#outbox[taken++], c.maxFrameBytes);
                if (m) { messages.push(m); bytes += m.length; }
            }
            if (taken === 0) return; // the window is full: the next ack flushes again
            this.#outbox.splice(0, taken);
            for (const frame of packFrames(messages, c.maxFrameBytes)) {
                if (!this.#send(c, frame)) return;
            }
        }
    }

    /** The wire message of one command, or null when there is nothing to send. */
    #encode(c, cmd, maxFrameBytes) {
        switch (cmd.kind) {
            case 'subscribe': return this.#encodeSubscribe(c, cmd.subscription, maxFrameBytes);
            case 'unsubscribe':
                return cmd.subscription._sentConnection === c.number ? encodeUnsubscribe(cmd.subscription.id) : null;
            case 'publish': {
                const request = cmd.request;
                if (request.messageBytes > maxFrameBytes) {
                    request.reject(this.#tooLarge(request, maxFrameBytes));
                    return null;
                }
                const id = this.#nextCorrelation();
                request.correlationId = id;
                request.sendOrder = this.#nextSendOrder++;
                this.#unacked.set(id, request);
                return encodePublish(id, request.pathBytes, request.value);
            }
            case 'republish': {
                const request = cmd.request;
                this.#sendAgainIds.delete(request.correlationId);
                if (request.messageBytes > maxFrameBytes) {
                    request.reject(this.#tooLarge(request, maxFrameBytes));
                    return null;
                }
                this.#unacked.set(request.correlationId, request);
                return encodeRepublish(request.correlationId, request.pathBytes, request.value);
            }
            case 'remove': {
                const request = cmd.request;
                if (request.messageBytes > maxFrameBytes) {
                    request.reject(this.#removeTooLarge(request, maxFrameBytes));
                    return null;
                }
                const id = this.#nextCorrelation();
                this.#pendingRemoves.set(id, request);
                return encodeRemove(id, request.selectorBytes);
            }
        }
        return null;
    }

    #encodeSubscribe(c, s, maxFrameBytes) {
        if (s._closed) return null;
        const selectorMessageBytes = HEADER_BYTES + 4 + 2 + s._selectorBytes.length + 4;
        let bytes = selectorMessageBytes + s._optionsBlock.length;
        if (bytes > maxFrameBytes) {
            this.#subscriptions.delete(s.id);
            this.#subscriptionsVersion++;
            s._refused(selectorMessageBytes > maxFrameBytes
                ? new RingcastError(`selector '${s.selector}' does not fit in the server's frame limit of `
                    + `${maxFrameBytes} bytes`, 'INVALID_SELECTOR')
                : new RingcastError(`the options of the subscription to '${s.selector}' take ${s._optionsBlock.length} `
                    + `bytes, and its SUBSCRIBE does not fit in the server's frame limit of ${maxFrameBytes} bytes`,
                'INVALID_OPTIONS'));
            return null;
        }
        let listed = [];
        let incarnations;
        if (s._confirmedOnce) {
            // a subscription with a view lists what it received through its view; a plain one what
            // the client has of each topic it matches
            const held = (s._viewed ? [...s._viewTopics].map(([t, h]) => [t, h.sequence])
                : [...this.#topics.values()].filter((t) => segmentsMatch(s._segments, t.segments)).map((t) => [t, t.sequence]))
                .filter(([, sequence]) => sequence > 0);
            listed = fitResume(held, bytes, maxFrameBytes, 0, Infinity);
            if (listed.length <= MAX_RESUME_INCARNATIONS && listed.some(([t]) => t.incarnation !== 0)) {
                // with the incarnations option (docs/protocol.md, "Removing topics"): 4 bytes more a
                // position and the option's head, and optionCount when the block had none; so the
                // list is made again to fit, at most MAX_RESUME_INCARNATIONS long. A topic left out
                // is taken from #1, which is always safe; one listed without its incarnation is not
                const head = 3 + (s._optionsBlock.length === 0 ? 1 : 0);
                listed = fitResume(held, bytes + head, maxFrameBytes, 4, MAX_RESUME_INCARNATIONS);
                incarnations = listed.map(([t]) => t.incarnation); // all 0, if any: no option (withIncarnations)
            }
            s._liveConnection = c.number; // it already has the values: updates may follow at once
        } else {
            s._viewTopics.clear(); // sent as a first subscribe again: it starts from the snapshots
        }
        s._sentConnection = c.number;
        s._viewId = null; // the reply's VIEW tells its view's id on this connection
        const resume = listed.map(([t, sequence]) => [t.pathBytes, sequence]);
        return encodeSubscribeWithBlock(s.id, s._selectorBytes, resume,
            withIncarnations(s._optionsBlock, incarnations, resume.length));
    }

    #nextCorrelation() {
        let id;
        do {
            id = this.#nextCorrelationId;
            this.#nextCorrelationId = id === LAST_CORRELATION_ID ? FIRST_CORRELATION_ID : id + 1;
        } while (this.#unacked.has(id) || this.#sendAgainIds.has(id) || this.#pendingRemoves.has(id)); // only after a wrap
        return id;
    }

    #tooLarge(request, maxFrameBytes) {
        return new RingcastError(`publish to '${request.topic}' takes ${request.messageBytes} bytes, more than the `
            + `server's frame limit of ${maxFrameBytes}`, 'VALUE_TOO_LARGE');
    }

    #removeTooLarge(request, maxFrameBytes) {
        return new RingcastError(`selector '${request.selector}' does not fit in the server's frame limit of `
            + `${maxFrameBytes} bytes`, 'INVALID_SELECTOR');
    }

    /** Sends one frame; false when the socket refused it (the connection then ends). */
    #send(c, frame) {
        try {
            c.ws.send(frame);
        } catch (e) {
            this.#fail(c, `cannot send: ${e.message}`, CLOSE_LOCAL_FAILURE);
            return false;
        }
        c.lastWriteAt = now();
        return true;
    }

    /** The publishes sent and not acked, in the order they were first sent; none are left unacked. */
    #takeUnacked() {
        // #unacked keeps this session's send order, which is already first-send order (those sent
        // again go out first, in order); sorted all the same, as #ended's merge relies on it
        const lost = [...this.#unacked.values()].sort((a, b) => a.sendOrder - b.sendOrder);
        this.#unacked.clear();
        return lost;
    }

    // -------------------------------------------------------------------- liveness

    // Built for background tabs, where browsers run timers about once a minute or freeze the tab:
    // a late timer proves nothing about the connection. Message events are not throttled that way,
    // so a healthy connection's PONG is recorded on time even when the check runs late. A check
    // that fired more than TIMER_LATENESS_TOLERANCE_MS late pings again and re-checks instead of
    // judging; only an on-time check that saw nothing since its PING declares the connection dead.

    /**
     * PING after pingIntervalMs of write silence (the server's idle rule), or of read silence while
     * no check runs (a client that only publishes would otherwise never find out its peer is gone).
     */
    #schedulePing(c, delayMs) {
        c.pingTimer = setTimeout(() => {
            c.pingTimer = null;
            if (c.ended) return;
            const t = now();
            const writeLeftMs = c.lastWriteAt + c.pingIntervalMs - t;
            const readLeftMs = c.checkTimer === null ? c.lastReceivedAt + c.pingIntervalMs - t : Infinity;
            const leftMs = Math.min(writeLeftMs, readLeftMs);
            if (leftMs <= 1) {
                this.#ping(c);
                this.#schedulePing(c, c.pingIntervalMs);
            } else {
                this.#schedulePing(c, leftMs);
            }
        }, delayMs);
    }

    #ping(c) {
        if (!this.#send(c, encodePing(++c.pingNonce))) return;
        if (c.checkTimer === null) { // a running check keeps judging against its own PING
            c.pingSentAt = c.lastWriteAt;
            this.#scheduleCheck(c);
        }
    }

    #scheduleCheck(c) {
        const timeoutMs = this.#options.pongTimeoutMs;
        const due = now() + timeoutMs;
        c.checkTimer = setTimeout(() => {
            c.checkTimer = null;
            if (c.ended) return;
            if (now() - due > TIMER_LATENESS_TOLERANCE_MS) {
                this.#ping(c); // throttled or frozen: no verdict, ask again
            } else if (c.lastReceivedAt < c.pingSentAt) {
                this.#fail(c, `no answer from the server within ${timeoutMs} ms of a PING`, CLOSE_LOCAL_FAILURE,
                    'no answer to PING');
            }
        }, timeoutMs);
    }
}

/**
 * The resume positions ([topic, sequence]) that fit in a SUBSCRIBE of `bytes` so far within
 * `maxFrameBytes`, each taking its path, its sequence and `extraBytes` (its incarnation), in the
 * order held, at most `maxEntries`. A message never spans frames: the server replays topics left
 * out from #1 (#onUpdate drops what the client has), or sends a snapshot after a gap.
 */
function fitResume(held, bytes, maxFrameBytes, extraBytes, maxEntries) {
    const listed = [];
    for (const entry of held) {
        if (listed.length >= maxEntries) break;
        const entryBytes = 2 + entry[0].pathBytes.length + 8 + extraBytes;
        if (bytes + entryBytes <= maxFrameBytes) {
            listed.push(entry);
            bytes += entryBytes;
        }
    }
    return listed;
}

/** Two lists of publish requests, each in send order, merged into one in send order. */
function mergeBySendOrder(a, b) {
    const merged = [];
    let i = 0;
    let j = 0;
    while (i < a.length && j < b.length) merged.push(a[i].sendOrder <= b[j].sendOrder ? a[i++] : b[j++]);
    return merged.concat(a.slice(i), b.slice(j));
}

/**
 * Whether an outbox command outlives a lost connection: a publish, first sent or sent again, or a
 * removal not sent yet (one sent is answered on its connection, or rejected when that is lost).
 */
function outlivesConnection(cmd) {
    return cmd.kind === 'publish' || cmd.kind === 'republish' || cmd.kind === 'remove';
}

/**
 * A random non-zero u64 (a BigInt), from the platform's cryptographic random source; on a runtime
 * without Web Crypto as a global (Node 18), from Math.random: the id needs to be unique, not secret.
 */
function newPublisherId() {
    const id = new BigUint64Array(1);
    do {
        if (globalThis.crypto?.getRandomValues) {
            globalThis.crypto.getRandomValues(id);
        } else {
            id[0] = (BigInt(Math.floor(Math.random() * 2 ** 32)) << 32n) | BigInt(Math.floor(Math.random() * 2 ** 32));
        }
    } while (id[0] === 0n);
    return id[0];
}

/** Cuts a string to at most `maxBytes` UTF-8 bytes (WebSocket close reasons allow 123). */
function utf8Clip(text, maxBytes) {
    while (utf8Encoder.encode(text).length > maxBytes) text = text.slice(0, -1);
    return text;
}

// ============================================================================ entry point

/**
 * Connects to a Ringcast server (one URL, or several tried round robin) and resolves with the
 * client once the first session is welcomed. Rejects with a RingcastError, and closes the client,
 * when no address answered within `connectTimeoutMs`. See ringcast.d.ts for the options.
 */
export async function connect(urlOrUrls, options = {}) {
    const urls = Array.isArray(urlOrUrls) ? [...urlOrUrls] : [urlOrUrls];
    if (urls.length === 0) throw new TypeError('connect needs at least one ws:// or wss:// URL');
    for (const url of urls) {
        let parsed;
        try { parsed = new URL(url); } catch { parsed = null; }
        if (!parsed || (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')) {
            throw new TypeError(`not a ws:// or wss:// URL: '${url}'`);
        }
    }
    return new RingcastClient(urls, options)._start();
}

/** Internals for the tests. Not public API: may change in any release. */
export const internals = Object.freeze({
    MessageType, Flags, HEADER_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH, PUBLISH_WINDOW,
    MAX_RESUME_INCARNATIONS,
    encodeHello, encodeSubscribe, encodeSubscribeOptions, withIncarnations, encodeUnsubscribe, encodePublish, encodeRepublish,
    encodeRemove, encodePing,
    decodeFrame, packFrames, ProtocolError,
    validatePath, parseSelector, matches, segmentsMatch,
});
