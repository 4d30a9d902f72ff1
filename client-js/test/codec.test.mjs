// The codec against the example of docs/protocol.md, selector matching, and local path checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { internals, UpdateKind, ErrorCode, RingcastError } from '../src/ringcast.js';

const { encodeHello, encodeSubscribe, encodeUnsubscribe, encodePublish, encodeRepublish, encodePing, decodeFrame,
    packFrames, ProtocolError, validatePath, parseSelector, matches } = internals;

/** Hex as written in docs/protocol.md: fields separated by spaces, strings in double quotes. */
function doc(text) {
    const bytes = [];
    for (const token of text.match(/"[^"]*"|[0-9A-Fa-f]+/g) ?? []) {
        if (token.startsWith('"')) bytes.push(...new TextEncoder().encode(token.slice(1, -1)));
        else for (let i = 0; i < token.length; i += 2) bytes.push(parseInt(token.slice(i, i + 2), 16));
    }
    return Uint8Array.from(bytes);
}

/**
 * The frames of a golden file of the protocol module (its README: `C->S` / `S->C` starts a frame,
 * hex bytes, `"text"`, `#` starts a comment unless quoted), each read with `doc`.
 */
function golden(name) {
    const file = readFileSync(new URL(`../../protocol/src/test/resources/golden/${name}`, import.meta.url), 'utf8');
    const frames = [];
    for (const token of file.match(/"[^"\n]*"|#[^\n]*|[^\s"#]+/g) ?? []) {
        if (token.startsWith('#')) continue;
        if (token === 'C->S' || token === 'S->C') frames.push([]);
        else if (frames.length === 0) throw new Error(`${name}: bytes before the first C->S or S->C`);
        else if (token.startsWith('"') || /^(?:[0-9A-Fa-f]{2})+$/.test(token)) frames.at(-1).push(token);
        else throw new Error(`${name}: '${token}' is neither hex bytes, a quoted string nor a direction marker`);
    }
    return frames.map((tokens) => doc(tokens.join(' ')));
}

const text = (bytes) => new TextDecoder().decode(bytes);

test('HELLO, SUBSCRIBE and PUBLISH encode as in the doc example', () => {
    assert.deepEqual(encodeHello('demo1'), doc('01 00000009 0001 0005 "demo1"'));
    assert.deepEqual(encodeSubscribe(1, 'fx/#'), doc('02 0000000E 00000001 0004 "fx/#" 00000000'));
    assert.deepEqual(encodePublish(1, 'fx/EURUSD', '1.0843'), doc('04 00000015 00000001 0009 "fx/EURUSD" "1.0843"'));
    assert.deepEqual(encodePublish(1, 'fx/EURUSD', new TextEncoder().encode('1.0843')),
        doc('04 00000015 00000001 0009 "fx/EURUSD" "1.0843"'));
});

test('client-to-server messages encode exactly as the golden frames', () => {
    assert.deepEqual(golden('hello.hex'), [encodeHello('ringcli')]);
    assert.deepEqual(golden('subscribe.hex'),
        [encodeSubscribe(2, 'fx/+/bid', [['fx/EURUSD/bid', 42], ['fx/GBPUSD/bid', 7]])]);
    assert.deepEqual(golden('unsubscribe.hex'), [encodeUnsubscribe(2)]);
    assert.deepEqual(golden('publish.hex'), [encodePublish(5, 'fx/EURUSD', Uint8Array.of(0x00, 0xFF, 0x10))]);
    assert.deepEqual(golden('ping.hex'), [encodePing(0x0123456789ABCDEFn)]);
});

test('REPUBLISH encodes exactly as its golden frame: the body of PUBLISH, type 0x06', () => {
    const [frame] = golden('republish.hex');
    assert.deepEqual(encodeRepublish(5, 'fx/EURUSD', Uint8Array.of(0x00, 0xFF, 0x10)), frame);
    assert.equal(frame[0], 0x06);
    assert.deepEqual(encodeRepublish(5, 'fx/EURUSD', Uint8Array.of(0x00, 0xFF, 0x10)).subarray(1),
        encodePublish(5, 'fx/EURUSD', Uint8Array.of(0x00, 0xFF, 0x10)).subarray(1));
    assert.deepEqual(encodeRepublish(1, 'fx/EURUSD', '1.0843'), doc('06 00000015 00000001 0009 "fx/EURUSD" "1.0843"'));
});

test('HELLO without a publisher id is unchanged: anonymous ends after the name, credentials as before', () => {
    assert.deepEqual(encodeHello('demo1', 1, undefined, 0n), doc('01 00000009 0001 0005 "demo1"'));
    assert.deepEqual(encodeHello('demo1', 1, undefined, undefined), doc('01 00000009 0001 0005 "demo1"'));
    assert.deepEqual(encodeHello('c', 1, { token: 'tk' }), doc('01 0000000A 0001 0001 "c" 02 0002 "tk"'));
    assert.deepEqual(encodeHello('c', 1, { principal: 'al', password: 'pw' }),
        doc('01 0000000E 0001 0001 "c" 01 0002 "al" 0002 "pw"'));
});

test('HELLO with a publisher id: after the credentials, kind 0 for an anonymous client, then 8 bytes', () => {
    const id = 0x8877665544332211n; // above 2^63: a u64, the same bytes as Java's negative long
    assert.deepEqual(encodeHello('demo1', 1, undefined, id),
        doc('01 00000012 0001 0005 "demo1" 00 8877665544332211'));
    assert.deepEqual(encodeHello('c', 1, { token: 'tk' }, 5n), doc('01 00000012 0001 0001 "c" 02 0002 "tk" 0000000000000005'));
    assert.deepEqual(encodeHello('c', 1, { principal: 'al', password: 'pw' }, 1),
        doc('01 00000016 0001 0001 "c" 01 0002 "al" 0002 "pw" 0000000000000001'));
    // read back field by field, as the server does
    const hello = encodeHello('demo1', 1, undefined, id);
    const v = new DataView(hello.buffer, hello.byteOffset, hello.byteLength);
    assert.equal(v.getUint32(1), hello.length - 5, 'body length');
    assert.equal(v.getUint16(5), 1);
    assert.equal(text(hello.subarray(9, 9 + v.getUint16(7))), 'demo1');
    assert.equal(hello[14], 0, 'credentials kind 0: anonymous');
    assert.equal(v.getBigUint64(15), id);
    assert.equal(hello.length, 23);
});

test('SUBSCRIBE with a resume list, UNSUBSCRIBE, PING', () => {
    assert.deepEqual(encodeSubscribe(7, 'a/+', [['a/b', 42], ['a/c', 2 ** 40]]),
        doc('02 00000027 00000007 0003 "a/+" 00000002 0003 "a/b" 000000000000002A 0003 "a/c" 0000010000000000'));
    assert.deepEqual(encodeUnsubscribe(3), doc('03 00000004 00000003'));
    assert.deepEqual(encodePing(5n), doc('05 00000008 0000000000000005'));
});

test('WELCOME decodes as in the doc example', () => {
    assert.deepEqual(decodeFrame(doc('81 00000014 0001 0008 "s-000001" 00100000 0001D4C0')), [
        { type: 'WELCOME', version: 1, sessionId: 's-000001', maxFrameBytes: 1048576, idleTimeoutMs: 120000 },
    ]);
});

test('a frame of TOPIC, SNAPSHOT and SUBSCRIBED decodes every message in order', () => {
    const messages = decodeFrame(doc(`82 0000000F 00000007 0009 "fx/EURUSD"
        83 00000017 00000001 00000007 000000000000002A 00 "1.0842"
        86 00000008 00000001 00000001`));
    assert.equal(messages.length, 3);
    assert.deepEqual(messages[0], { type: 'TOPIC', alias: 7, path: 'fx/EURUSD' });
    const { value, ...snapshot } = messages[1];
    assert.deepEqual(snapshot, { type: 'SNAPSHOT', subscriptionId: 1, alias: 7, sequence: 42, flags: 0 });
    assert.equal(text(value), '1.0842');
    assert.deepEqual(messages[2], { type: 'SUBSCRIBED', subscriptionId: 1, matchedTopics: 1 });
});

test('UPDATE and PUBLISH_ACK decode as in the doc example', () => {
    const [update] = decodeFrame(doc('84 00000013 00000007 000000000000002B 00 "1.0843"'));
    assert.equal(update.type, 'UPDATE');
    assert.equal(update.alias, 7);
    assert.equal(update.sequence, 43);
    assert.equal(update.flags, 0);
    assert.equal(text(update.value), '1.0843');
    assert.deepEqual(decodeFrame(doc('85 0000000C 00000001 000000000000002B')),
        [{ type: 'PUBLISH_ACK', correlationId: 1, sequence: 43 }]);
});

test('ERROR and PONG decode; an ArrayBuffer is accepted', () => {
    const frame = doc('87 0000000B 0014 40000000 0003 "bad" 88 00000008 0102030405060708');
    assert.deepEqual(decodeFrame(frame.buffer), [
        { type: 'ERROR', code: ErrorCode.INVALID_PATH, correlationId: 2 ** 30, reason: 'bad' },
        { type: 'PONG' },
    ]);
});

test('fields a newer revision appends are skipped', () => {
    assert.deepEqual(decodeFrame(doc('86 0000000A 00000002 00000003 FFFF 86 00000008 00000004 00000000')), [
        { type: 'SUBSCRIBED', subscriptionId: 2, matchedTopics: 3 },
        { type: 'SUBSCRIBED', subscriptionId: 4, matchedTopics: 0 },
    ]);
});

test('with a callback, messages before a malformed one are handled', () => {
    const seen = [];
    assert.throws(() => decodeFrame(doc('86 00000008 00000001 00000001 86 00000009 00'), (m) => seen.push(m)),
        (e) => e instanceof ProtocolError && e.code === 'MALFORMED_FRAME' && /truncated/.test(e.message));
    assert.equal(seen.length, 1);
});

test('malformed and unknown messages are protocol errors', () => {
    const fails = (hex, code, pattern) => assert.throws(() => decodeFrame(doc(hex)),
        (e) => e instanceof ProtocolError && e.code === code && pattern.test(e.message));
    fails('', 'MALFORMED_FRAME', /empty frame/);
    fails('86 0000', 'MALFORMED_FRAME', /header/);
    fails('86 00000004 00000001', 'MALFORMED_FRAME', /matchedTopics/);
    fails('99 00000000', 'UNKNOWN_MESSAGE_TYPE', /0x99/);
    fails('01 00000000', 'UNKNOWN_MESSAGE_TYPE', /HELLO/); // a client-to-server type
    fails('82 00000008 00000001 0002 C328', 'MALFORMED_FRAME', /UTF-8/);
    fails('85 0000000C 00000001 8000000000000000', 'MALFORMED_FRAME', /2\^63-1/);
});

test('packFrames keeps order and never exceeds the limit unless one message alone does', () => {
    const messages = [1, 2, 3, 4, 5].map((n) => encodeUnsubscribe(n)); // 9 bytes each
    const frames = packFrames(messages, 20);
    assert.deepEqual(frames.map((f) => f.length), [18, 18, 9]);
    assert.deepEqual(decodeFramesIds(frames), [1, 2, 3, 4, 5]);
    assert.deepEqual(packFrames([new Uint8Array(30)], 20).map((f) => f.length), [30]);
});

function decodeFramesIds(frames) {
    // UNSUBSCRIBE is client-to-server: read the ids straight from the bytes
    return frames.flatMap((f) => {
        const ids = [];
        for (let i = 0; i < f.length; i += 9) ids.push(new DataView(f.buffer, f.byteOffset + i + 5, 4).getUint32(0));
        return ids;
    });
}

test('selector matching: exact, +, #', () => {
    assert.ok(matches('fx/EURUSD/bid', 'fx/EURUSD/bid'));
    assert.ok(!matches('fx/EURUSD/bid', 'fx/EURUSD'));
    assert.ok(!matches('fx/EURUSD', 'fx/EURUSD/bid'));
    assert.ok(matches('fx/+/bid', 'fx/EURUSD/bid'));
    assert.ok(matches('fx/+/bid', 'fx/GBPUSD/bid'));
    assert.ok(!matches('fx/+/bid', 'fx/bid'));
    assert.ok(!matches('fx/+/bid', 'fx/EURUSD/ask'));
    assert.ok(!matches('fx/+', 'fx'));
    assert.ok(matches('+', 'fx'));
    assert.ok(!matches('+', 'fx/EURUSD'));
    assert.ok(matches('fx/#', 'fx'), "'fx/#' matches the parent 'fx'");
    assert.ok(matches('fx/#', 'fx/EURUSD'));
    assert.ok(matches('fx/#', 'fx/EURUSD/bid'));
    assert.ok(!matches('fx/#', 'fxx'));
    assert.ok(!matches('fx/#', 'eq/IBM'));
    assert.ok(matches('#', 'fx'));
    assert.ok(matches('#', 'a/b/c/d'));
    assert.ok(matches('+/+/#', 'a/b'));
    assert.ok(!matches('+/+/#', 'a'));
});

test('valid paths and selectors pass', () => {
    assert.deepEqual(validatePath('fx/EURUSD/bid'), ['fx', 'EURUSD', 'bid']);
    assert.deepEqual(validatePath('prix/€/日本'), ['prix', '€', '日本']);
    assert.deepEqual(parseSelector('fx/+/bid'), ['fx', '+', 'bid']);
    assert.deepEqual(parseSelector('#'), ['#']);
    validatePath('a'.repeat(256));
    validatePath('a'.repeat(1000)); // the server's own limits decide; it may allow more than its default 256
    validatePath(Array(16).fill('s').join('/'));
});

test('bad paths throw TypeError naming the rule and the path', () => {
    const rejects = (path, pattern) => assert.throws(() => validatePath(path),
        (e) => e instanceof TypeError && pattern.test(e.message) && e.message.includes('path'));
    rejects('', /empty/);
    rejects('/fx', /empty segment.*leading, trailing or double/);
    rejects('fx/', /empty segment/);
    rejects('fx//a', /empty segment at index 3/);
    rejects('fx/+/bid', /wildcard, allowed only in selectors/);
    rejects('fx/#', /wildcard/);
    rejects('fx/EUR USD', /whitespace.*U\+0020/);
    rejects('fx/a\tb', /U\+0009/);
    rejects('fx/a\u0000', /U\+0000/);
    rejects('fx/\u00A0', /U\+00A0/);
    rejects('fx/\uD800', /unpaired surrogate/);
    rejects('a'.repeat(65536), /65536 bytes, more than the limit of 65535/);
    rejects('é'.repeat(32768), /65536 bytes/);
    rejects(Array(1025).fill('s').join('/'), /1025 segments, more than the limit of 1024/);
    assert.throws(() => validatePath('fx/EURUSD/bid/'), /'fx\/EURUSD\/bid\/'/);
});

test('bad selectors throw TypeError naming the rule and the selector', () => {
    const rejects = (selector, pattern) => assert.throws(() => parseSelector(selector),
        (e) => e instanceof TypeError && pattern.test(e.message) && e.message.includes(`'${selector}'`));
    rejects('fx/#/bid', /'#' must be the last segment/);
    rejects('fx/a+', /mixes a wildcard.*whole segments/);
    rejects('fx/#b', /whole segments/);
    rejects('fx//+', /empty segment/);
    rejects('/#', /empty segment/);
    rejects('fx/+ ', /whitespace/);
    assert.throws(() => parseSelector(''), TypeError);
    assert.throws(() => parseSelector(Array(1025).fill('+').join('/')), /1025 segments/);
});

test('exported constants', () => {
    assert.deepEqual({ ...UpdateKind }, { SNAPSHOT: 'snapshot', UPDATE: 'update',
        SNAPSHOT_AFTER_GAP: 'snapshot-after-gap', CONFLATED: 'conflated', GAP_WITHOUT_VALUE: 'gap-without-value' });
    assert.ok(Object.isFrozen(UpdateKind));
    assert.ok(Object.isFrozen(ErrorCode));
    assert.equal(ErrorCode.SLOW_CONSUMER, 8);
    assert.equal(ErrorCode.TOO_MANY_SUBSCRIPTIONS, 24);
    const e = new RingcastError('x', 'SLOW_CONSUMER', 1008);
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'SLOW_CONSUMER');
    assert.equal(e.closeCode, 1008);
    assert.equal(new RingcastError('y').code, null);
    assert.equal(new RingcastError('y').closeCode, 0);
});

test('error codes are those of the Java protocol module, by name and number', () => {
    const java = readFileSync(new URL('../../protocol/src/main/java/io/ringcast/protocol/ErrorCode.java', import.meta.url), 'utf8');
    const codes = Object.fromEntries([...java.matchAll(/^\s+([A-Z_]+)\((\d+),/gm)].map(([, name, code]) => [name, Number(code)]));
    assert.ok(Object.keys(codes).length > 20);
    assert.deepEqual({ ...ErrorCode }, codes);
});
