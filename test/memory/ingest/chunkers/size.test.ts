import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../../memory/ingest/chunkers/index.ts';
import { countTokens } from '../../../../memory/ingest/tokens.ts';
import { expectWellFormed, prose } from './invariants.ts';

describe('size chunker', () => {
  it('keeps one window for text under the size', () => {
    const doc = 'A short document.\nTwo lines.';
    const drafts = chunkText(doc, 'size');
    expect(drafts).toEqual([{ text: doc, start: 0, end: doc.length, tokens: countTokens(doc) }]);
  });

  it('cuts windows of at most chunkTokens that overlap by about overlapTokens', () => {
    const doc = prose(5, 300);
    const drafts = chunkText(doc, 'size', { chunkTokens: 500, overlapTokens: 50 });
    expectWellFormed(doc, drafts);
    expect(drafts.length).toBeGreaterThan(5);
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(500);
    for (let i = 1; i < drafts.length; i++) {
      const prev = drafts[i - 1]!;
      const cur = drafts[i]!;
      expect(cur.start).toBeLessThan(prev.end);
      const shared = countTokens(doc.slice(cur.start, prev.end));
      expect(shared).toBeGreaterThan(30);
      expect(shared).toBeLessThanOrEqual(50);
    }
    expect(drafts[0]!.start).toBe(0);
    expect(drafts.at(-1)!.end).toBe(doc.length);
  });

  it('covers the text without gaps when there is no overlap', () => {
    const doc = prose(6, 200);
    const drafts = chunkText(doc, 'size', { chunkTokens: 300, overlapTokens: 0 });
    for (let i = 1; i < drafts.length; i++) expect(drafts[i]!.start).toBe(drafts[i - 1]!.end);
    expect(drafts.map((d) => d.text).join('')).toBe(doc.slice(drafts[0]!.start));
  });

  it('prefers a line break or sentence end near the end of the window', () => {
    const line = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho\n';
    const doc = line.repeat(200);
    const drafts = chunkText(doc, 'size', { chunkTokens: 200, overlapTokens: 0 });
    for (const d of drafts.slice(0, -1)) expect(d.text.endsWith('\n')).toBe(true);
    const sentences = 'One two three four five six seven eight nine ten. '.repeat(300);
    for (const d of chunkText(sentences, 'size', { chunkTokens: 200, overlapTokens: 0 }).slice(0, -1)) {
      expect(d.text.endsWith('.')).toBe(true);
    }
  });

  it('cuts hard when no nice break exists', () => {
    const doc = 'word'.repeat(5000);
    const drafts = chunkText(doc, 'size', { chunkTokens: 100, overlapTokens: 10 });
    expectWellFormed(doc, drafts);
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(100);
  });

  it('chunks a 50 MB single-line file', () => {
    const doc = 'lorem ipsum dolor sit amet consectetur '.repeat(1_300_000);
    expect(doc.length).toBeGreaterThan(50_000_000);
    const drafts = chunkText(doc, 'size');
    expect(drafts[0]!.start).toBe(0);
    expect(drafts.at(-1)!.end).toBe(doc.length);
    for (let i = 1; i < drafts.length; i++) expect(drafts[i]!.start).toBeLessThan(drafts[i - 1]!.end);
    expect(drafts.every((d) => d.tokens <= 2000)).toBe(true);
    expect(drafts[1]!.tokens).toBe(countTokens(drafts[1]!.text));
  });
});
