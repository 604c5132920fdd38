import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, Names } from '../../../memory/engine/record-codec.ts';
import type { DocumentRecord } from '../../../memory/types.ts';

const typical: DocumentRecord = {
  id: 'changelog-debian-3b98af30',
  path: '/usr/share/doc/libfoo1/changelog.Debian',
  hash: '33d8b946c4211af59cbb0bc48e68166669689e82ba5953d6e8f0d093cc5c2a0f',
  bytes: 36223,
  chars: 36223,
  chunker: 'paragraph',
  ingestedAt: '2026-11-29T04:58:36.371Z',
  segment: 'seg-000002',
  first: 0,
  chunks: 85,
  tokens: 11624,
};

/** Encodes and decodes `record`, as the catalog does (the encoder's buffer is reused, so copy it). */
function roundTrip(record: DocumentRecord, names = new Names()): { back: DocumentRecord; bytes: number } {
  const body = Buffer.from(encodeRecord(record, names));
  const padded = Buffer.concat([Buffer.from('xyz'), body]);
  return { back: decodeRecord(record.id, padded, 3, names), bytes: body.length };
}

/** What the catalog promised before it had a codec: the record as JSON gives it back, keys in order. */
function expectAsJson(record: DocumentRecord): void {
  const { back } = roundTrip(record);
  expect(JSON.stringify(back)).toBe(JSON.stringify(record));
  expect(back).toEqual(JSON.parse(JSON.stringify(record)));
}

describe('record codec', () => {
  it('gives a typical record back, keys in the same order, in under 0.15 KB', () => {
    const { back, bytes } = roundTrip(typical);
    expect(JSON.stringify(back)).toBe(JSON.stringify(typical));
    expect(bytes).toBeLessThan(150);
    expect(bytes).toBeLessThan(JSON.stringify(typical).length / 2);
  });

  it('keeps the key order of each record, however its keys were set', () => {
    const { segment, first, chunks, tokens, ...rest } = typical;
    expectAsJson({ segment, first, ...rest, tags: ['b', 'a'], chunks, tokens } as DocumentRecord);
    expectAsJson({ ...typical, tags: ['t'], notes: ['invalid UTF-8 replaced'] });
  });

  it('gives back nested values, nulls and numbers of every kind as JSON would', () => {
    expectAsJson({
      ...typical,
      path: null,
      memory: { topic: 'db', importance: 0.75, source: 'user' },
      meta: { project: '/home/me/p', from: -12, at: 1.5e300, big: 2 ** 60, zero: -0 },
      bytes: Number.NaN,
      chars: Number.POSITIVE_INFINITY,
      tokens: -3,
      first: 0.5,
    } as unknown as DocumentRecord);
  });

  it('leaves out keys whose value JSON leaves out', () => {
    const odd = { ...typical, chars: undefined, f: () => 1, s: Symbol('x') } as unknown as DocumentRecord;
    const { back } = roundTrip(odd);
    expect(Object.keys(back)).not.toContain('chars');
    expect(JSON.stringify(back)).toBe(JSON.stringify(odd));
  });

  it('keeps strings that are not hashes or times exactly, however close they come', () => {
    expectAsJson({ ...typical, hash: typical.hash.toUpperCase() });
    expectAsJson({ ...typical, hash: `${typical.hash}0` });
    expectAsJson({ ...typical, hash: typical.hash.slice(1) });
    expectAsJson({ ...typical, ingestedAt: '2026-13-40T25:61:61.999Z' });
    expectAsJson({ ...typical, ingestedAt: '2026-11-29T04:58:36Z' });
    expectAsJson({ ...typical, ingestedAt: '' });
  });

  it('keeps any JavaScript string, lone surrogates and wide characters included', () => {
    const { back } = roundTrip({
      ...typical,
      id: 'doc-\ud800-x',
      path: '/docs/日本語/caf\u00e9/\udfff.md',
      tags: ['😀', '\ud83d'],
    });
    expect(back.id).toBe('doc-\ud800-x');
    expect(back.path).toBe('/docs/日本語/caf\u00e9/\udfff.md');
    expect(back.tags).toEqual(['😀', '\ud83d']);
    expectAsJson({ ...typical, path: 'caf\u00e9\u00ff' });
  });

  it('keeps a "__proto__" key of a parsed record as an own key', () => {
    const parsed = JSON.parse(
      `{"id":"p","hash":"h","__proto__":{"polluted":1},"segment":"s"}`,
    ) as DocumentRecord;
    const { back } = roundTrip(parsed);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(JSON.stringify(back)).toBe(JSON.stringify(parsed));
    expect(({} as { polluted?: number }).polluted).toBeUndefined();
  });

  it('numbers the strings that repeat, so many records share them', () => {
    const names = new Names();
    const sizes = Array.from(
      { length: 50 },
      (_, i) => roundTrip({ ...typical, id: `d${i}`, first: i, segment: `seg-00000${i % 3}` }, names).bytes,
    );
    expect(Math.max(...sizes)).toBeLessThan(120);
    expect(names.name(names.number('seg-000001'))).toBe('seg-000001');
    expect(() => names.name(9999)).toThrow(
      expect.objectContaining({ code: 'RUNTIME', message: expect.stringMatching(/no name 9999/) }),
    );
  });
});
