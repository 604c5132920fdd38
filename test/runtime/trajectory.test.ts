import { describe, expect, it } from 'vitest';
import type { SpanNode } from '../../src/runtime/result.ts';
import type { TraceEvent } from '../../src/runtime/trace.ts';
import { buildTrajectories, buildTrajectory } from '../../src/runtime/trajectory.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

async function events(reply: ConstructorParameters<typeof FnModel>[0], opts = {}): Promise<TraceEvent[]> {
  const seen: TraceEvent[] = [];
  const { rlm } = setup(new FnModel(reply), { onEvent: (e) => seen.push(e), ...opts });
  await rlm.answer({ question: 'Q?', context: 'ctx' });
  return seen;
}

const sub = (s: SpanNode | undefined, turn: number, block = 0, i = 0): SpanNode | undefined =>
  s?.turns[turn]?.blocks[block]?.subcalls[i];

describe('trajectory', () => {
  it('marks failed and cached sub-calls, and keeps block errors', async () => {
    const evs = await events(
      (req) => {
        const last = lastUser(req);
        if (req.depth === 1) {
          if (last.includes('boom')) throw new Error('provider down');
          return 'fine';
        }
        if (last.includes('[block 1')) return 'FINAL("ok")';
        return repl(
          'print(await rlm_query("same"))\nprint(await rlm_query("same"))\nprint(await rlm_query("boom"))\nundefinedThing()',
        );
      },
      { maxDepth: 1 },
    );
    const t = buildTrajectory(evs);
    const root = t.root;
    const block = root.turns[0]?.blocks[0];
    expect(block?.subcalls.map((s) => [s.id, s.kind, s.status, s.cached])).toEqual([
      ['s1', 'leaf', 'ok', false],
      ['s2', 'leaf', 'cached', true],
      ['s3', 'leaf', 'error', false],
    ]);
    expect(sub(root, 0, 0, 2)?.error).toEqual({ code: 'PROVIDER', message: 'fake:model: provider down' });
    expect(sub(root, 0, 0, 2)?.turns[0]?.reply).toBeUndefined();
    expect(block?.output?.ok).toBe(false);
    expect(block?.output?.error?.message).toMatch(/undefinedThing/);
    expect(root.totals.subCalls).toBe(3);
    expect(root.totals.modelCalls).toBe(3); // two root turns and one leaf that answered
  });

  it('keeps what a torn trace holds: unfinished spans and no result', async () => {
    const evs = await events((req) => {
      if (req.depth > 0) return 'FINAL("sub")';
      return lastUser(req).includes('[block') ? 'FINAL("done")' : repl('print(await rlm_query("a"))');
    });
    const cut = evs.slice(
      0,
      evs.findIndex((e) => e.type === 'subcall_end'),
    );
    const t = buildTrajectory(cut);
    expect(t.result).toBeUndefined();
    expect(t.root.status).toBe('unfinished');
    expect(t.root.endMs).toBe(cut.at(-1)?.t);
    const s1 = sub(t.root, 0);
    expect(s1?.status).toBe('unfinished');
    expect(s1?.endMs).toBeUndefined();
    expect(s1?.final?.answer).toBe('sub');
  });

  it('splits a shared file into one tree per run, in file order', async () => {
    const a = await events(() => 'FINAL("a")');
    const b = await events(() => 'FINAL("b")');
    const mixed = [a[0], b[0], ...a.slice(1), ...b.slice(1)] as TraceEvent[];
    const trees = buildTrajectories(mixed);
    expect(trees.map((t) => t.result?.answer)).toEqual(['a', 'b']);
    expect(trees.map((t) => t.run)).toEqual([a[0]?.run, b[0]?.run]);
  });
});
