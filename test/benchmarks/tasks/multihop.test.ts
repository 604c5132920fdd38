import { describe, expect, it } from 'vitest';
import { generateMultihop } from '../../../benchmarks/tasks/multihop.ts';
import { countTokens } from '../../../memory/ingest/tokens.ts';

/** Follows the chain with nothing but the question and the documents. */
function solve(question: string, docs: string[]): { answer: string; docsUsed: Set<number> } {
  const q = /^What is the ([a-z ]+?) of ([A-Z][a-z]+ [A-Z][a-z]+)\?/.exec(question)!;
  const attr = q[1]!;
  let name = q[2]!;
  const docsUsed = new Set<number>();
  for (let hop = 0; hop < 20; hop++) {
    const link = `The ${attr} of ${name} is the same as the ${attr} of `;
    const value = new RegExp(`The ${attr} of ${name} is (\\d+)\\.`);
    const i = docs.findIndex((d) => d.includes(link) || value.test(d));
    if (i < 0) throw new Error(`no fact about ${name}`);
    docsUsed.add(i);
    const v = value.exec(docs[i]!);
    if (v) return { answer: v[1]!, docsUsed };
    const doc = docs[i]!;
    name = /^([A-Z][a-z]+ [A-Z][a-z]+)/.exec(doc.slice(doc.indexOf(link) + link.length))![1]!;
  }
  throw new Error('chain too long');
}

describe('multihop generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = generateMultihop({ size: 8192, seed: 1, index: 0 });
    const b = generateMultihop({ size: 8192, seed: 1, index: 0 });
    expect(b.context).toEqual(a.context);
    expect(b.gold).toEqual(a.gold);
    expect(generateMultihop({ size: 8192, seed: 2, index: 0 }).context).not.toEqual(a.context);
  });

  it('chains 2–4 hops across different documents to the gold value', () => {
    for (let index = 0; index < 6; index++) {
      const t = generateMultihop({ size: 8192, seed: 11, index });
      const { answer, docsUsed } = solve(t.question, t.context);
      expect(t.gold).toEqual({ kind: 'exact', answer });
      expect(t.chain.length - 1).toBe(t.meta.hops);
      expect(t.meta.hops).toBeGreaterThanOrEqual(2);
      // Every link sits in its own document: one retrieval step cannot see the whole chain.
      expect(docsUsed.size).toBe(t.chain.length);
      // Decoys: the start entity has other attributes with numbers, never the asked one directly.
      const start = t.chain[0]!;
      const all = t.context.join('\n');
      expect(new RegExp(`The [a-z ]+ of ${start} is \\d+\\.`).test(all)).toBe(true);
      expect(new RegExp(`The ${t.meta.attribute} of ${start} is \\d+\\.`).test(all)).toBe(false);
    }
  });

  it('splits the context into titled documents close to the token target', () => {
    for (const size of [8192, 32768]) {
      const t = generateMultihop({ size, seed: 2, index: 0 });
      expect(t.context.every((d) => /^Document \d+: /.test(d))).toBe(true);
      expect(t.contextTokens).toBe(t.context.reduce((n, d) => n + countTokens(d), 0));
      expect(Math.abs(t.contextTokens - size) / size).toBeLessThan(0.03);
    }
  });
});
