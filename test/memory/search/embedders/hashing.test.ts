import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../../core/errors.ts';
import { HashingEmbedder, hashEmbed } from '../../../../memory/search/embedders/hashing.ts';

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot;
}

function norm(a: number[]): number {
  return Math.sqrt(cosine(a, a));
}

describe('HashingEmbedder', () => {
  it('is deterministic across calls and instances', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. 42 times!';
    const [a] = await new HashingEmbedder().embed([text]);
    const [b] = await new HashingEmbedder().embed([text]);
    expect(a).toEqual(b);
    expect(a).toEqual(hashEmbed(text));
  });

  it('returns L2-normalised vectors of the configured length', async () => {
    const e = new HashingEmbedder({ dimensions: 128 });
    expect(e.name).toBe('hash:128');
    const vectors = await e.embed(['hello world', 'a much longer text with many different words in it', 'x']);
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(128);
      expect(norm(v)).toBeCloseTo(1, 10);
    }
  });

  it('gives the zero vector for text without words', () => {
    const v = hashEmbed('  ... !!! ', 64);
    expect(v.every((x) => x === 0)).toBe(true);
    expect(hashEmbed('', 64).every((x) => x === 0)).toBe(true);
  });

  it('is case-insensitive', () => {
    expect(hashEmbed('Vector Database')).toEqual(hashEmbed('vector database'));
  });

  it('places similar texts closer than unrelated ones', () => {
    const q = hashEmbed('how do I configure the database connection pool');
    const near = hashEmbed('configuring the connection pool of the database');
    const far = hashEmbed('the cat sat quietly on a warm windowsill in spring');
    expect(cosine(q, near)).toBeGreaterThan(cosine(q, far) + 0.2);
  });

  it('relates word variants through character trigrams', () => {
    const base = hashEmbed('tokenizer');
    const variant = hashEmbed('tokenizers');
    const other = hashEmbed('umbrella');
    expect(cosine(base, variant)).toBeGreaterThan(0.5);
    expect(cosine(base, variant)).toBeGreaterThan(cosine(base, other));
  });

  it('uses word order through bigrams', () => {
    const ab = hashEmbed('dog bites man');
    const ba = hashEmbed('man bites dog');
    expect(cosine(ab, ba)).toBeLessThan(0.999);
    expect(cosine(ab, ba)).toBeGreaterThan(0.5);
  });

  it('handles non-ASCII words', () => {
    const a = hashEmbed('Übergrößenträger straße');
    const b = hashEmbed('übergrößenträger');
    expect(norm(a)).toBeCloseTo(1, 10);
    expect(cosine(a, b)).toBeGreaterThan(0.4);
  });

  it('rejects bad dimensions', () => {
    try {
      new HashingEmbedder({ dimensions: 1.5 });
      expect.unreachable();
    } catch (err) {
      expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    }
  });

  it('honours an aborted signal', async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    await expect(new HashingEmbedder().embed(['x'], ctrl.signal)).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
