import { expect } from 'vitest';
import { countTokens } from '../../../../memory/ingest/tokens.ts';
import type { ChunkDraft } from '../../../../memory/types.ts';

/** Drafts are exact slices (unless `sliced` is false), count their own tokens, and come in order. */
export function expectWellFormed(doc: string, drafts: ChunkDraft[], opts: { sliced?: boolean } = {}): void {
  let prevStart = -1;
  for (const d of drafts) {
    if (opts.sliced !== false) expect(d.text).toBe(doc.slice(d.start, d.end));
    expect(d.tokens, JSON.stringify(d.text.slice(0, 60))).toBe(countTokens(d.text));
    expect(d.start).toBeGreaterThan(prevStart);
    expect(d.end).toBeGreaterThan(d.start);
    expect(d.end).toBeLessThanOrEqual(doc.length);
    expect(d.text.trim()).not.toBe('');
    prevStart = d.start;
  }
}

/** Non-overlapping drafts that, together with whitespace gaps, cover the whole document. */
export function expectCovers(doc: string, drafts: ChunkDraft[]): void {
  let pos = 0;
  for (const d of drafts) {
    expect(d.start).toBeGreaterThanOrEqual(pos);
    expect(doc.slice(pos, d.start).trim()).toBe('');
    pos = d.end;
  }
  expect(doc.slice(pos).trim()).toBe('');
}

/** Deterministic PRNG for generated documents. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the a of memory chunk graph token model answer question recursive context été naïve 42 3.14 don't".split(
    ' ',
  );

/** Prose with paragraphs, sentences, odd whitespace and line endings, seeded. */
export function prose(seed: number, paragraphs: number): string {
  const rnd = prng(seed);
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentences: string[] = [];
    const n = 1 + Math.floor(rnd() * 12);
    for (let s = 0; s < n; s++) {
      const words: string[] = [];
      for (let w = 0; w < 3 + rnd() * 20; w++) words.push(WORDS[Math.floor(rnd() * WORDS.length)]!);
      sentences.push(
        words.join(rnd() < 0.05 ? '  ' : ' ') + ['.', '!', '?', '…', '.'][Math.floor(rnd() * 5)],
      );
    }
    out.push(sentences.join(rnd() < 0.2 ? '\n' : ' '));
  }
  const seps = ['\n\n', '\n\n\n', '\n \n', '\r\n\r\n', '\n\t\n  '];
  return out.map((p, i) => (i === 0 ? p : seps[Math.floor(rnd() * seps.length)] + p)).join('');
}
