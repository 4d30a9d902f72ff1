// The shared delta vectors (testdata/delta-vectors.json) that every Ringcast client checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { applyDelta, crc32, DeltaFormatError } from '../src/ringcast.js';

const vectors = JSON.parse(readFileSync(new URL('../../testdata/delta-vectors.json', import.meta.url), 'utf8'));

/** The file's hex may have spaces between fields. */
function hex(text) {
    const clean = text.replace(/\s+/g, '');
    return Uint8Array.from(clean.match(/../g) ?? [], (h) => parseInt(h, 16));
}

test('the vector file has both kinds', () => {
    assert.ok(vectors.valid.length > 0);
    assert.ok(vectors.invalid.length > 0);
});

for (const v of vectors.valid) {
    test(`valid: ${v.name}`, () => {
        assert.deepEqual(applyDelta(hex(v.base), hex(v.delta)), hex(v.target));
    });
}

for (const v of vectors.invalid) {
    test(`invalid: ${v.name}`, () => {
        assert.throws(() => applyDelta(hex(v.base), hex(v.delta)), (e) => {
            assert.ok(e instanceof DeltaFormatError, `${e}`);
            assert.match(e.message, /error/);
            if (v.error) assert.ok(e.message.includes(v.error), `'${e.message}' should name '${v.error}'`);
            return true;
        });
    });
}

test('applyDelta reads a delta that is a view into a larger buffer', () => {
    const v = vectors.valid[1];
    const delta = hex(v.delta);
    const padded = new Uint8Array(delta.length + 7);
    padded.set(delta, 3);
    assert.deepEqual(applyDelta(hex(v.base), padded.subarray(3, 3 + delta.length)), hex(v.target));
});

test('crc32 is the IEEE one of zlib and PNG', () => {
    assert.equal(crc32(new TextEncoder().encode('123456789')), 0xCBF43926);
    assert.equal(crc32(new Uint8Array(0)), 0);
    assert.equal(crc32(hex('68656c6c6f20746865726520776f726c64')), 0xd96e28f5);
});
