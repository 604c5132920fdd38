import { describe, expect, it } from 'vitest';
import { SignatureIndex, type SignedChunk } from '../../../memory/search/linker.ts';

const WORDS = Array.from({ length: 400 }, (_, i) => `w${i}`);

/** Chunk n of document d{n/4}: four signature terms that drift with n, so old and new chunks share some. */
function chunk(n: number): SignedChunk {
  const document = `d${Math.floor(n / 4)}`;
  const terms = [0, 1, 2, 3].map((k) => WORDS[(Math.floor(n / 50) * 3 + k * 11 + (n % 7)) % WORDS.length]!);
  return {
    id: `${document}:${n % 4}`,
    segment: `s${Math.floor(n / 100)}`,
    document,
    ordinal: n % 4,
    terms,
    idx: n % 100,
  };
}

const idf = (t: string) => 1 + (t.length % 3);
const alive = () => true;

describe('SignatureIndex', () => {
  it('relates the same after dropping its oldest chunks (compacted in place) as an index of only the rest', () => {
    const dropped = new SignatureIndex();
    const total = 15_000;
    const drop = 9_000;
    for (let n = 0; n < total; n++) dropped.add(chunk(n));
    // In two steps: the first stays under the compaction threshold, the second crosses it.
    dropped.dropOldest(3_000);
    dropped.dropOldest(drop - 3_000);
    const fresh = new SignatureIndex();
    for (let n = drop; n < total; n++) fresh.add(chunk(n));
    expect(dropped.size).toBe(fresh.size);
    let edges = 0;
    for (let n = total; n < total + 200; n++) {
      const a = dropped.relate(chunk(n), idf, alive);
      expect(a).toEqual(fresh.relate(chunk(n), idf, alive));
      for (const e of a) expect(Number(e.to.slice(1, e.to.indexOf(':'))) * 4).toBeGreaterThanOrEqual(drop);
      edges += a.length;
      dropped.add(chunk(n));
      fresh.add(chunk(n));
    }
    expect(edges).toBeGreaterThan(0);
  });
});
