import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../../memory/ingest/chunkers/index.ts';
import { countTokens } from '../../../../memory/ingest/tokens.ts';
import { expectCovers, expectWellFormed, prose } from './invariants.ts';

/** A paragraph of roughly `tokens` tokens made of short sentences. */
function para(tokens: number, word = 'river'): string {
  const sentence = `The ${word} runs past the old mill and into town. `;
  return sentence.repeat(Math.max(1, Math.round(tokens / countTokens(sentence)))).trim();
}

describe('paragraph chunker', () => {
  it('keeps paragraphs of 100–800 tokens as their own chunks', () => {
    const paras = [para(150), para(300, 'lake'), para(700, 'sea')];
    const doc = paras.join('\n\n');
    const drafts = chunkText(doc, 'paragraph');
    expectWellFormed(doc, drafts);
    expect(drafts.map((d) => d.text.trim())).toEqual(paras);
  });

  it('merges small consecutive paragraphs until a chunk reaches the minimum', () => {
    const small = Array.from({ length: 12 }, (_, i) => `Note ${i}: the cache is warm again today.`);
    const doc = small.join('\n\n');
    const drafts = chunkText(doc, 'paragraph');
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    expect(drafts.length).toBeLessThan(small.length);
    for (const d of drafts.slice(0, -1)) expect(d.tokens).toBeGreaterThanOrEqual(100);
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(800);
    // Merged chunks are whole paragraphs.
    for (const d of drafts) expect(d.text.trim().endsWith('today.')).toBe(true);
  });

  it('folds a small last paragraph into the chunk before it', () => {
    const doc = `${para(200)}\n\nThe end.`;
    const drafts = chunkText(doc, 'paragraph');
    expect(drafts).toHaveLength(1);
    expect(drafts[0]!.text).toBe(doc);
  });

  it('splits a paragraph over 800 tokens at sentence ends', () => {
    const big = para(2000);
    const doc = `${para(150, 'lake')}\n\n${big}\n\n${para(150, 'sea')}`;
    const drafts = chunkText(doc, 'paragraph');
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    const parts = drafts.filter((d) => d.text.includes('river'));
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const d of parts) {
      expect(d.tokens).toBeLessThanOrEqual(800);
      expect(d.text.trim().endsWith('town.')).toBe(true);
    }
  });

  it('falls back to size cuts for a sentence with no end', () => {
    const doc = 'endless '.repeat(3000);
    const drafts = chunkText(doc, 'paragraph');
    expectWellFormed(doc, drafts);
    expect(drafts.length).toBeGreaterThanOrEqual(3);
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(800);
  });

  it('honours minTokens and maxTokens', () => {
    const doc = prose(3, 120);
    const drafts = chunkText(doc, 'paragraph', { minTokens: 20, maxTokens: 120 });
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(120);
  });

  it('does not treat a single line break as a paragraph break', () => {
    const doc = 'First line of a paragraph\nsecond line of the same paragraph.\n\nNext paragraph.';
    const drafts = chunkText(doc, 'paragraph', { minTokens: 1 });
    expect(drafts.map((d) => d.text)).toEqual([
      'First line of a paragraph\nsecond line of the same paragraph.\n\n',
      'Next paragraph.',
    ]);
  });
});
