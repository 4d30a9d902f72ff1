// The codec against the example of docs/protocol.md, selector matching, and local path checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { internals, UpdateKind, ErrorCode, RingcastError } from '../src/ringcast.js';

const { encodeHello, encodeSubscribe, encodeSubscribeOptions, withIncarnations, encodeUnsubscribe, encodePublish,
    encodeRepublish, encodeRemove, encodePing, decodeFrame, packFrames, ProtocolError, validatePath, parseSelector, matches,
    Flags, MAX_RESUME_INCARNATIONS } = internals;

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

/** Whether the protocol module has this golden file (those of removing topics come with that revision). */
const hasGolden = (name) => existsSync(new URL(`../../protocol/src/test/resources/golden/${name}`, import.meta.url));
/** A test option: skipped, saying why, while the golden file is not there. */
const needsGolden = (...names) => {
    const missing = names.filter((name) => !hasGolden(name));
    return { skip: missing.length > 0 && `no golden ${missing.join(', ')} in protocol/src/test/resources/golden yet` };
};

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

test('HELLO with a connection number: 4 bytes after the publisher id, only with one', () => {
    assert.deepEqual(encodeHello('c', 1, { token: 'tk' }, 5n, 3),
        doc('01 00000016 0001 0001 "c" 02 0002 "tk" 0000000000000005 00000003'));
    assert.deepEqual(encodeHello('demo1', 1, undefined, 7n, 0xFFFFFFFF),
        doc('01 00000016 0001 0005 "demo1" 00 0000000000000007 FFFFFFFF'));
    assert.deepEqual(encodeHello('demo1', 1, undefined, 0n, 3), doc('01 00000009 0001 0005 "demo1"'),
        'no publisher id: no connection number either');
    assert.throws(() => encodeHello('demo1', 1, undefined, 7n, 2 ** 32), /connection 4294967296: 1 to 2\^32-1/);
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
    assert.deepEqual(messages[0], { type: 'TOPIC', alias: 7, path: 'fx/EURUSD', incarnation: 0 }, 'no incarnation: 0, not known');
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

// ---------------------------------------------------------------- issue 16: options and views (being built)

/** The options of golden/subscribe-options.hex, the same as the Java side's GoldenFramesTest. */
const EVERY_OPTION = { maxRate: 4, fields: ['bid', 'ask'], filter: 'spread < 0.0005', rewind: 60,
    rewindSince: 1795737600000 };

test('SUBSCRIBE with every option encodes exactly as the golden frame the Java codec writes', () => {
    assert.deepEqual(golden('subscribe-options.hex'), [encodeSubscribe(3, 'fx/+', [['fx/EURUSD', 42]], EVERY_OPTION)]);
});

test('the doc shows the golden SUBSCRIBE with every option', () => {
    const md = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
    const at = md.indexOf('A `SUBSCRIBE` with every option');
    const block = md.slice(md.indexOf('```', at) + 3, md.indexOf('```', md.indexOf('```', at) + 3));
    // each line: an optional direction, the bytes, then two or more spaces before the description
    const bytes = block.split('\n').filter((l) => l.trim()).map((l) => l.replace(/^C->S/, '').trim().split(/\s{2,}/)[0]);
    assert.deepEqual([doc(bytes.join(' '))], golden('subscribe-options.hex'));
});

test('no options is no block: SUBSCRIBE stays byte for byte that of protocol version 1', () => {
    const plain = doc('02 0000000E 00000001 0004 "fx/#" 00000000');
    for (const none of [undefined, null, {}, { maxRate: undefined, fields: undefined }]) {
        assert.deepEqual(encodeSubscribe(1, 'fx/#', [], none), plain);
        assert.deepEqual(encodeSubscribeOptions(none), new Uint8Array(0));
    }
});

test('each option alone, and the block in the order of the kinds whatever the order of the keys', () => {
    const block = (options) => Buffer.from(encodeSubscribeOptions(options)).toString('hex');
    assert.equal(block({ maxRate: 0.001 }), '01' + '010004' + '00000001');
    assert.equal(block({ maxRate: 100000 }), '01' + '010004' + '05f5e100');
    assert.equal(block({ maxRate: 1 / 3 }), '01' + '010004' + '0000014d', 'rounded to thousandths: 333');
    assert.equal(block({ fields: ['quote.bid'] }), '01' + '02000c' + '01' + '0009' + '71756f74652e626964');
    assert.equal(block({ fields: ['価格'] }), '01' + '020009' + '01' + '0006' + 'e4bea1e6a0bc');
    assert.equal(block({ filter: 'x = 1' }), '01' + '030005' + '78203d2031');
    assert.equal(block({ rewind: 1 }), '01' + '040004' + '00000001');
    assert.equal(block({ rewind: 2 ** 31 - 1 }), '01' + '040004' + '7fffffff');
    assert.equal(block({ rewindSince: 0 }), '01' + '050008' + '0000000000000000');
    assert.equal(block({ rewindSince: 0x7FFFFFFFFFFFFFFFn }), '01' + '050008' + '7fffffffffffffff');
    assert.equal(block({ rewindSince: 1795737600000n }), block({ rewindSince: 1795737600000 }));
    assert.equal(block({ rewindSince: 5, rewind: 4, filter: 'a=1', fields: ['b'], maxRate: 0.002 }),
        '05' + '01000400000002' + '02000401000162' + '030003613d31' + '04000400000004' + '0500080000000000000005');
});

test('the body length counts the options block', () => {
    const m = encodeSubscribe(9, '#', [['a', 1]], { fields: Array.from({ length: 32 }, (_, i) => `f${i}`) });
    const v = new DataView(m.buffer, m.byteOffset, m.byteLength);
    assert.equal(v.getUint32(1), m.length - 5);
    assert.equal(m[5 + 4 + 3 + 4 + 2 + 1 + 8], 1, 'optionCount after the resume list');
    assert.equal(m.length, 5 + 4 + 3 + 4 + 11 + 1 + 3 + 1 + 10 * 4 + 22 * 5);
});

test('options the wire cannot carry are refused with an error naming the option', () => {
    const refused = (options, Type, message) => assert.throws(() => encodeSubscribe(1, '#', [], options),
        (e) => e instanceof Type && e.message === message);
    for (const rate of [0, 0.0009, -1, 100000.001, NaN, Infinity]) {
        refused({ maxRate: rate }, RangeError, `maxRate: ${rate} updates per second is out of range (0.001 to 100000)`);
    }
    refused({ maxRate: '4' }, RangeError, 'maxRate: 4 updates per second is out of range (0.001 to 100000)');
    refused({ fields: [] }, RangeError, 'fields: no paths given; name at least one');
    refused({ fields: Array(33).fill('a') }, RangeError, 'fields: 33 paths, more than 32');
    refused({ fields: ['p'.repeat(65533)] }, RangeError, 'fields: 65536 bytes on the wire, more than the 65535 an option holds');
    refused({ fields: 'bid' }, TypeError, 'fields: an array of paths');
    refused({ fields: ['a', 1] }, TypeError, 'fields: path 2 is not a string');
    refused({ filter: '' }, RangeError, 'filter: empty');
    refused({ filter: 'x'.repeat(1025) }, RangeError, 'filter: longer than 1024 characters (1025)');
    refused({ filter: '😀'.repeat(513) }, RangeError, 'filter: longer than 1024 characters (1026)');
    refused({ filter: 5 }, TypeError, 'filter: a string');
    refused({ rewind: 0 }, RangeError, 'rewind: 0 updates, out of range (1 to 2147483647)');
    refused({ rewind: 2 ** 31 }, RangeError, 'rewind: 2147483648 updates, out of range (1 to 2147483647)');
    refused({ rewind: 1.5 }, RangeError, 'rewind: 1.5 updates, out of range (1 to 2147483647)');
    refused({ rewindSince: -1 }, RangeError,
        'rewindSince: -1 is not milliseconds since the epoch (a whole number, at least 0, at most 2^63-1)');
    refused({ rewindSince: 2n ** 63n }, RangeError,
        'rewindSince: 9223372036854775808 is not milliseconds since the epoch (a whole number, at least 0, at most 2^63-1)');
    refused({ maxrate: 4 }, TypeError, "unknown subscribe option 'maxrate' (maxRate, fields, filter, rewind, rewindSince)");
    refused('maxRate=4', TypeError, 'subscribe options must be an object of maxRate, fields, filter, rewind, rewindSince');
    assert.equal(encodeSubscribeOptions({ fields: ['p'.repeat(65532)] }).length, 1 + 3 + 65535, 'the largest fields');
    assert.equal(encodeSubscribeOptions({ filter: '€'.repeat(1024) }).length, 1 + 3 + 3072);
});

test('VIEW, UNMATCHED and the viewed SNAPSHOT and UPDATE decode as their golden frames say', () => {
    assert.deepEqual(decodeFrame(golden('view.hex')[0]), [{ type: 'VIEW', subscriptionId: 3, viewId: 7 }]);
    assert.deepEqual(decodeFrame(golden('unmatched.hex')[0]), [{ type: 'UNMATCHED', viewId: 7, alias: 12, sequence: 43 }]);
    const [snapshot] = decodeFrame(golden('snapshot-viewed.hex')[0]);
    assert.deepEqual({ ...snapshot, value: text(snapshot.value) },
        { type: 'SNAPSHOT', subscriptionId: 3, alias: 12, sequence: 43, flags: Flags.VIEWED, viewId: 7, value: '{"bid":1.0841}' });
    const [update] = decodeFrame(golden('update-viewed.hex')[0]);
    assert.deepEqual({ ...update, value: text(update.value) },
        { type: 'UPDATE', alias: 12, sequence: 44, flags: Flags.VIEWED, viewId: 7, value: '{"bid":1.0842}' });
});

test('a message without VIEWED has no viewId; with it, the view id comes before the value', () => {
    const [plain] = decodeFrame(doc('84 00000013 00000007 000000000000002B 00 "1.0843"'));
    assert.equal('viewId' in plain, false);
    const [viewed] = decodeFrame(doc('84 00000017 00000007 000000000000002B 16 FFFFFFFF "1.0843"'));
    assert.equal(viewed.flags, Flags.VIEWED | Flags.CONFLATED | Flags.DELTA);
    assert.equal(viewed.viewId, 0xFFFFFFFF);
    assert.equal(text(viewed.value), '1.0843');
    const [empty] = decodeFrame(doc('83 00000015 00000000 00000001 0000000000000001 11 00000000'));
    assert.deepEqual({ ...empty, value: empty.value.length },
        { type: 'SNAPSHOT', subscriptionId: 0, alias: 1, sequence: 1, flags: Flags.GAP | Flags.VIEWED, viewId: 0, value: 0 });
});

test('a viewed message cut inside its view id, and VIEW and UNMATCHED cut short, are malformed', () => {
    const fails = (hex, pattern) => assert.throws(() => decodeFrame(doc(hex)),
        (e) => e instanceof ProtocolError && e.code === 'MALFORMED_FRAME' && pattern.test(e.message));
    fails('84 0000000F 00000007 000000000000002B 10 0000', /UPDATE message: field viewId needs 4 bytes, 2 left/);
    fails('83 00000011 00000000 00000001 0000000000000001 10', /SNAPSHOT message: field viewId needs 4 bytes, 0 left/);
    fails('89 00000006 00000003 0000', /VIEW message: field viewId needs 4 bytes, 2 left/);
    fails('8A 0000000C 00000007 0000000C 00000000', /UNMATCHED message: field sequence needs 8 bytes, 4 left/);
    fails('8A 00000010 00000007 0000000C 8000000000000000', /UNMATCHED field sequence is 9223372036854775808, above 2\^63-1/);
});

test('INVALID_OPTIONS is error 32, and an ERROR with it decodes', () => {
    assert.equal(ErrorCode.INVALID_OPTIONS, 32);
    assert.deepEqual(decodeFrame(doc('87 0000001C 0020 00000005 0014 "maxRate: given twice"')),
        [{ type: 'ERROR', code: 32, correlationId: 5, reason: 'maxRate: given twice' }]);
});

// ---------------------------------------------------------------- removing topics

/** The incarnation of golden/topic.hex and golden/subscribe-incarnations.hex (GoldenFramesTest's INCARNATION). */
const INCARNATION = 1764384256;

test('REMOVE encodes as its table says: u32 correlationId, string selector', () => {
    assert.deepEqual(encodeRemove(6, 'fx/GBPUSD/#'), doc('07 00000011 00000006 000B "fx/GBPUSD/#"'));
    assert.deepEqual(encodeRemove(2 ** 30, '#'), doc('07 00000007 40000000 0001 "#"'));
    assert.throws(() => encodeRemove(1, 'a'.repeat(65536)), /selector of 65536 UTF-8 bytes is longer than the 65535/);
});

test('REMOVE encodes exactly as its golden frame', needsGolden('remove.hex'), () => {
    assert.deepEqual(golden('remove.hex'), [encodeRemove(6, 'fx/GBPUSD/#')]);
});

test('TOPIC_REMOVED and REMOVED decode; a TOPIC ends with its incarnation, 0 when absent', () => {
    assert.deepEqual(decodeFrame(doc('8B 0000000C 00000007 000000000000002B 8C 00000008 00000006 00000003')), [
        { type: 'TOPIC_REMOVED', alias: 7, lastSequence: 43 },
        { type: 'REMOVED', correlationId: 6, removedTopics: 3 },
    ]);
    assert.deepEqual(decodeFrame(doc('82 00000013 00000007 0009 "fx/EURUSD" FFFFFFFF')),
        [{ type: 'TOPIC', alias: 7, path: 'fx/EURUSD', incarnation: 0xFFFFFFFF }], 'a u32: all 32 bits');
    assert.deepEqual(decodeFrame(doc('82 0000000F 00000007 0009 "fx/EURUSD"')),
        [{ type: 'TOPIC', alias: 7, path: 'fx/EURUSD', incarnation: 0 }], 'a server of an earlier revision');
    assert.deepEqual(decodeFrame(doc('82 00000015 00000007 0009 "fx/EURUSD" 00000009 FFFF')),
        [{ type: 'TOPIC', alias: 7, path: 'fx/EURUSD', incarnation: 9 }], 'what a later revision appends is skipped');
    assert.deepEqual(decodeFrame(doc('8B 0000000E 00000001 0000000000000001 FFFF 8C 00000009 00000002 00000000 FF')), [
        { type: 'TOPIC_REMOVED', alias: 1, lastSequence: 1 }, { type: 'REMOVED', correlationId: 2, removedTopics: 0 }]);
});

test('TOPIC, TOPIC_REMOVED and REMOVED cut inside a field are malformed', () => {
    const fails = (hex, pattern) => assert.throws(() => decodeFrame(doc(hex)),
        (e) => e instanceof ProtocolError && e.code === 'MALFORMED_FRAME' && pattern.test(e.message));
    fails('82 00000011 00000007 0009 "fx/EURUSD" 0000', /TOPIC message: field incarnation needs 4 bytes, 2 left/);
    fails('8B 00000008 00000007 00000000', /TOPIC_REMOVED message: field lastSequence needs 8 bytes, 4 left/);
    fails('8B 0000000C 00000007 8000000000000000', /TOPIC_REMOVED field lastSequence is 9223372036854775808, above 2\^63-1/);
    fails('8C 00000004 00000006', /REMOVED message: field removedTopics needs 4 bytes, 0 left/);
});

test('TOPIC_REMOVED, REMOVED and TOPIC with its incarnation decode as their golden frames say',
    needsGolden('topic-removed.hex', 'removed.hex', 'topic.hex'), () => {
        assert.deepEqual(decodeFrame(golden('topic-removed.hex')[0]), [{ type: 'TOPIC_REMOVED', alias: 7, lastSequence: 43 }]);
        assert.deepEqual(decodeFrame(golden('removed.hex')[0]), [{ type: 'REMOVED', correlationId: 6, removedTopics: 3 }]);
        const [topic] = decodeFrame(golden('topic.hex')[0]);
        assert.equal(topic.alias, 256);
        assert.equal(topic.path, 'fx/€');
        // a topic.hex of before the revision has none: 0, not known
        assert.ok(topic.incarnation === INCARNATION || topic.incarnation === 0, `incarnation ${topic.incarnation}`);
    });

test('SUBSCRIBE resuming across a removal encodes exactly as its golden frame', needsGolden('subscribe-incarnations.hex'), () => {
    assert.deepEqual(golden('subscribe-incarnations.hex'),
        [encodeSubscribe(4, 'fx/#', [['fx/EURUSD', 42], ['fx/GBPUSD', 7]], undefined, [INCARNATION, 0])]);
});

test('incarnations: option kind 6, a u32 per resume position, after the options given, optionCount one more', () => {
    const resume = [['fx/EURUSD', 42], ['fx/GBPUSD', 7]];
    const plain = encodeSubscribe(4, 'fx/#', resume);
    assert.deepEqual(encodeSubscribe(4, 'fx/#', resume, undefined, [INCARNATION, 0]),
        doc(`02 00000040 00000004 0004 "fx/#" 00000002 0009 "fx/EURUSD" 000000000000002A 0009 "fx/GBPUSD" 0000000000000007
            01 06 0008 692A5E00 00000000`));
    // after every option of the user's, which keep their order: the block in the order of the kinds
    const every = encodeSubscribe(3, 'fx/+', [['fx/EURUSD', 42]], EVERY_OPTION, [7]);
    const withoutIt = encodeSubscribe(3, 'fx/+', [['fx/EURUSD', 42]], EVERY_OPTION);
    const at = withoutIt.length - encodeSubscribeOptions(EVERY_OPTION).length;
    assert.equal(every[at], 6, 'optionCount: the 5 given and incarnations');
    assert.deepEqual(every.subarray(at + 1, withoutIt.length), withoutIt.subarray(at + 1));
    assert.deepEqual(every.subarray(withoutIt.length), doc('06 0004 00000007'));
    assert.equal(new DataView(every.buffer).getUint32(1), every.length - 5, 'the body length counts it');
    // nothing to say: no option, the SUBSCRIBE is what it was
    assert.deepEqual(encodeSubscribe(4, 'fx/#', resume, undefined, [0, 0]), plain, 'every incarnation unknown');
    assert.deepEqual(encodeSubscribe(4, 'fx/#', resume, undefined, undefined), plain);
    assert.deepEqual(encodeSubscribe(1, '#', [], undefined, []), encodeSubscribe(1, '#'), 'no resume list');
    const block = encodeSubscribeOptions({ rewind: 2 });
    assert.equal(withIncarnations(block, [1, 2], 2).length, block.length + 3 + 8);
    assert.equal(withIncarnations(block, [0, 0], 2), block);
});

test('incarnations travel only with at most 16,383 resume positions; a wrong count or value is refused', () => {
    assert.equal(MAX_RESUME_INCARNATIONS, 16383);
    const most = withIncarnations(new Uint8Array(0), Array(16383).fill(1), 16383);
    assert.equal(most.length, 1 + 3 + 4 * 16383);
    assert.equal(new DataView(most.buffer).getUint16(2), 65532);
    assert.equal(withIncarnations(new Uint8Array(0), Array(16384).fill(1), 16384).length, 0, 'a longer list travels without it');
    assert.throws(() => withIncarnations(new Uint8Array(0), [1], 2), (e) => e instanceof RangeError
        && e.message === 'incarnations: 1 for 2 resume positions; one each');
    for (const bad of [-1, 2 ** 32, 1.5, '1']) {
        assert.throws(() => withIncarnations(new Uint8Array(0), [0, bad], 2),
            (e) => e instanceof RangeError && e.message === `incarnations: position 2 is ${bad}, not a u32`);
    }
});

test('every golden frame of a message the client sends encodes again byte for byte; every other one decodes', () => {
    // whatever the protocol module holds, files of this revision included: a generic round trip
    const dir = new URL('../../protocol/src/test/resources/golden/', import.meta.url);
    const names = readdirSync(dir).filter((name) => name.endsWith('.hex'));
    assert.ok(names.length >= 20);
    const reencoded = [];
    for (const name of names) {
        for (const frame of golden(name)) {
            if (frame[0] >= 0x80) {
                assert.doesNotThrow(() => decodeFrame(frame), name);
                continue;
            }
            const again = reencode(frame);
            if (again === null) continue; // HELLO: its own tests above
            assert.deepEqual(again, frame, name);
            reencoded.push(name);
        }
    }
    for (const name of ['remove.hex', 'subscribe-incarnations.hex', 'subscribe-options.hex', 'publish.hex']) {
        if (hasGolden(name)) assert.ok(reencoded.includes(name), name);
    }
});

/** Reads a client message's fields from its bytes and encodes them again with the codec; null for HELLO. */
function reencode(frame) {
    const v = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    let q = 5;
    const end = 5 + v.getUint32(1);
    const u32 = () => { q += 4; return v.getUint32(q - 4); };
    const str = () => { const n = v.getUint16(q); q += 2 + n; return text(frame.subarray(q - n, q)); };
    switch (frame[0]) {
        case 0x02: {
            const id = u32(); const selector = str(); const resume = [];
            for (let n = u32(); n > 0; n--) { const path = str(); q += 8; resume.push([path, Number(v.getBigUint64(q - 8))]); }
            // the options as given (kinds 1 to 5) are read back by the options tests: kept as bytes here,
            // with incarnations (kind 6, last) split off and written again by withIncarnations
            if (q === end) return encodeSubscribe(id, selector, resume);
            let block = frame.subarray(q, end);
            let incarnations;
            let pos = 1;
            for (let i = 0; i < block[0]; i++) {
                const length = new DataView(block.buffer, block.byteOffset + pos + 1, 2).getUint16(0);
                if (block[pos] === 6) {
                    incarnations = Array.from({ length: length / 4 },
                        (_, k) => new DataView(block.buffer, block.byteOffset + pos + 3 + 4 * k, 4).getUint32(0));
                    const rest = Uint8Array.from([...block.subarray(0, pos), ...block.subarray(pos + 3 + length)]);
                    rest[0] -= 1;
                    block = rest[0] === 0 ? new Uint8Array(0) : rest;
                    break;
                }
                pos += 3 + length;
            }
            const bytes = encodeSubscribe(id, selector, resume);
            const out = withIncarnations(block, incarnations, resume.length);
            return Uint8Array.from([...bytes.subarray(0, 1), ...u32be(bytes.length - 5 + out.length), ...bytes.subarray(5), ...out]);
        }
        case 0x03: return encodeUnsubscribe(u32());
        case 0x04: case 0x06: {
            const corr = u32(); const path = str();
            return (frame[0] === 0x04 ? encodePublish : encodeRepublish)(corr, path, frame.slice(q, end));
        }
        case 0x05: return encodePing(v.getBigUint64(5));
        case 0x07: { const corr = u32(); return encodeRemove(corr, str()); }
        default: return null;
    }
}

const u32be = (n) => [n >>> 24, (n >>> 16) & 0xFF, (n >>> 8) & 0xFF, n & 0xFF];
