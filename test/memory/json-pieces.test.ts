import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';
import { jsonPieces } from '../../memory/json-pieces.ts';
import { tempDir } from '../helpers/temp.ts';
import { prose, writeSampleCorpus } from './helpers/corpus.ts';

const joined = (value: object) => [...jsonPieces(value)].join('');

describe('jsonPieces', () => {
  it('joins to exactly what JSON.stringify writes', () => {
    const values: object[] = [
      {},
      [],
      { a: [] },
      {
        version: 1,
        segment: 'seg-000001',
        chunks: [{ id: 'a:0', text: 'x\n"y"\\ café 日本 😀 \u2028' }, null, 3],
      },
      { related: [['a', 'b', 'seg-1', 0.5]], signatures: [[], ['river', 'stone']], n: null, s: 'str' },
      { nested: { list: [1, 2, { deep: [true] }] }, tail: [{ a: undefined, b: 1 }] },
      // Lone surrogates are escaped by JSON.stringify; so they must be here.
      { texts: ['\ud800 alone', 'pair \ud83d\ude00', 'end \udc00'] },
    ];
    for (const v of values) expect(joined(v)).toBe(JSON.stringify(v));
  });

  it('leaves out what JSON.stringify leaves out, and writes null in arrays for it', () => {
    const v = { a: undefined, f: () => 1, list: [undefined, () => 1, Symbol('s'), 'ok'], z: 2 };
    expect(joined(v)).toBe(JSON.stringify(v));
    expect(joined({ only: undefined })).toBe('{}');
  });

  it('writes an iterator as the array of its elements, taking each only when its piece is asked for', () => {
    const items = [{ id: 'a' }, undefined, 'b', [1, 2]];
    let taken = 0;
    function* lazily() {
      for (const item of items) {
        taken++;
        yield item;
      }
    }
    const pieces = jsonPieces({ version: 1, documents: lazily(), none: (function* () {})() });
    expect(pieces.next().value).toBe('{"version":1');
    expect(pieces.next().value).toBe(',"documents":');
    expect(pieces.next().value).toBe('[');
    expect(taken).toBe(0);
    expect(pieces.next().value).toBe('{"id":"a"}');
    expect(taken).toBe(1);
    const rest = [...pieces].join('');
    expect(`{"version":1,"documents":[{"id":"a"}${rest}`).toBe(
      JSON.stringify({ version: 1, documents: items, none: [] }),
    );
    // A Map or a Set is not an iterator: JSON.stringify's `{}` stands.
    const v = { m: new Map([[1, 2]]), s: new Set([1]) };
    expect(joined(v)).toBe(JSON.stringify(v));
  });

  it('gives a big array element by element, never as one string', () => {
    const chunks = Array.from({ length: 1000 }, (_, i) => ({ id: `d:${i}`, text: 'word '.repeat(400) }));
    const pieces = [...jsonPieces({ version: 1, chunks })];
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(2100);
    expect(pieces.join('')).toBe(JSON.stringify({ version: 1, chunks }));
  });

  it('writes every JSON file of a store byte for byte as JSON.stringify of its content', async () => {
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
    await store.ingestPaths([corpus], { segmentChars: 2000 });
    await store.ingestText('extra', prose(5, 30), { segmentChars: 2000 });
    await store.close();
    const dir = path.join(root, 'store');
    const files = readdirSync(dir)
      .filter((f) => /^(documents|links)-\d+\.json$/.test(f))
      .map((f) => path.join(dir, f));
    expect(files.length).toBe(2);
    for (const file of files) {
      const raw = readFileSync(file, 'utf8');
      expect(raw, file).toBe(JSON.stringify(JSON.parse(raw)));
    }
  });
});
