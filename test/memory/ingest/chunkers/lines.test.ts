import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../../memory/ingest/chunkers/index.ts';
import { countTokens } from '../../../../memory/ingest/tokens.ts';
import { expectCovers, expectWellFormed } from './invariants.ts';

describe('lines chunker', () => {
  it('groups whole lines up to the budget', () => {
    const doc = Array.from(
      { length: 500 },
      (_, i) =>
        `2025-01-01T00:00:${String(i % 60).padStart(2, '0')}Z INFO request ${i} served in ${i % 97} ms`,
    ).join('\n');
    const drafts = chunkText(doc, 'lines', { maxTokens: 200 });
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    expect(drafts.length).toBeGreaterThan(10);
    for (const d of drafts) {
      expect(d.tokens).toBeLessThanOrEqual(200);
      expect(d.start === 0 || doc[d.start - 1] === '\n').toBe(true);
      expect(d.end === doc.length || doc[d.end - 1] === '\n').toBe(true);
    }
  });

  it('defaults to an 800-token budget', () => {
    const doc = 'a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p\n'.repeat(2000);
    const drafts = chunkText(doc, 'lines');
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(800);
    expect(Math.max(...drafts.map((d) => d.tokens))).toBeGreaterThan(700);
  });

  it('cuts code between top-level declarations rather than inside them', () => {
    const fn = (i: number) =>
      `export function handler${i}(req: Request): Response {\n  const body = parse(req.body);\n  log('handling', body.id, ${i});\n  return respond(body);\n}\n`;
    const doc = Array.from({ length: 40 }, (_, i) => fn(i)).join('\n');
    const drafts = chunkText(doc, 'lines', { maxTokens: 150, path: 'src/handlers.ts' });
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    for (const d of drafts) {
      expect(d.text.startsWith('export function')).toBe(true);
      expect(d.text.trimEnd().endsWith('}')).toBe(true);
    }
  });

  it('splits a single line longer than the budget with the size logic', () => {
    const long = JSON.stringify({
      rows: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}` })),
    });
    const doc = `{"head": 1}\n${long}\n{"tail": 2}\n`;
    const drafts = chunkText(doc, 'lines', { maxTokens: 300 });
    expectWellFormed(doc, drafts);
    expectCovers(doc, drafts);
    expect(drafts.length).toBeGreaterThan(countTokens(long) / 300);
    for (const d of drafts) expect(d.tokens).toBeLessThanOrEqual(300);
  });

  it('keeps blank lines with the line before them', () => {
    const doc = 'one\n\n\ntwo\n   \nthree\n';
    const drafts = chunkText(doc, 'lines', { maxTokens: 2 });
    expect(drafts.map((d) => d.text)).toEqual(['one\n\n\n', 'two\n   \n', 'three\n']);
  });
});
