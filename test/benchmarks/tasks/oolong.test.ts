import { describe, expect, it } from 'vitest';
import { Rng } from '../../../benchmarks/rng.ts';
import { buildOolong, OOLONG_QUERIES, oolongQuestion } from '../../../benchmarks/tasks/oolong.ts';
import { formatDay, generateOolongData, LABELS } from '../../../benchmarks/tasks/oolong-data.ts';
import { countTokens } from '../../../memory/ingest/tokens.ts';
import { dayOf, itemsFromContext, oolongAnswer } from '../helpers/oolong-oracle.ts';

describe('oolong generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = buildOolong({ size: 8192, seed: 1, index: 0 }).task;
    const b = buildOolong({ size: 8192, seed: 1, index: 0 }).task;
    expect(b.context).toBe(a.context);
    expect(b.question).toBe(a.question);
    expect(b.gold).toEqual(a.gold);
    expect(buildOolong({ size: 8192, seed: 2, index: 0 }).task.context).not.toBe(a.context);
  });

  it('writes one OOLONG-style line per record, with the dates and users of the records', () => {
    const { task, data } = buildOolong({ size: 8192, seed: 4, index: 0 }, true);
    const records = data.records!;
    const items = itemsFromContext(task.context as string, (_, i) => LABELS[records[i]!.label]!);
    expect(items).toHaveLength(records.length);
    items.forEach((it, i) => {
      expect(it.day).toBe(records[i]!.day);
      expect(it.user).toBe(records[i]!.user);
    });
    expect(formatDay(0)).toBe('Jan 01, 2021');
    expect(dayOf(formatDay(800))).toBe(800);
    // Labels are hidden: no line names its label.
    expect(/\|\| (Label|label):/.test(task.context as string)).toBe(false);
  });

  it('answers every kind of query correctly, recomputed from the records', () => {
    for (const seed of [1, 2, 3]) {
      const data = generateOolongData(new Rng(`t/${seed}`), 8192, true);
      const items = data.records!.map((r) => ({ day: r.day, user: r.user, label: LABELS[r.label]! }));
      for (const kind of OOLONG_QUERIES) {
        const q = oolongQuestion(new Rng(`q/${seed}/${kind}`), data, kind);
        expect(String(q.gold.answer)).toBe(oolongAnswer(q.question, items));
        expect(q.question).toContain('Instance');
      }
    }
  });

  it('cycles query kinds over indexes and keeps the size on target', () => {
    const kinds = new Set<string>();
    for (let index = 0; index < OOLONG_QUERIES.length; index++) {
      const { task } = buildOolong({ size: 8192, seed: 5, index });
      kinds.add(String(task.meta.query));
      expect(task.contextTokens).toBe(countTokens(task.context as string));
      expect(Math.abs(task.contextTokens - 8192) / 8192).toBeLessThan(0.02);
    }
    // most/least fall back to counts on a tie, so at least the other five kinds appear.
    expect(kinds.size).toBeGreaterThanOrEqual(5);
  });

  it('skews label frequencies so most/least questions have a unique answer at scale', () => {
    const data = generateOolongData(new Rng('skew'), 32768);
    const counts = [...data.labels.slice(0, 6)];
    expect(new Set(counts).size).toBe(6);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(data.lines);
  });
});

describe('the smoke policy heuristic', () => {
  it('labels most instances right but not all, so policy scores are not trivially perfect', async () => {
    const { heuristicLabel } = await import('../../../benchmarks/policies/oolong.ts');
    const data = generateOolongData(new Rng('heuristic'), 32768, true);
    const records = data.records!;
    const right = records.filter((r) => heuristicLabel(r.text) === LABELS[r.label]).length;
    expect(right / records.length).toBeGreaterThan(0.6);
    expect(right).toBeLessThan(records.length);
  });
});
