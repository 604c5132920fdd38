import { describe, expect, it } from 'vitest';
import { LEAF_PROMPT } from '../../src/prompts/leaf.ts';
import type { ModelRequest } from '../../src/runtime/model.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('sub-calls and depth', () => {
  it('runs depth 1 as a sub-RLM with its own sandbox and depth 2 as a plain leaf', async () => {
    const model = new FnModel((req) => {
      const last = lastUser(req);
      if (req.depth === 0) {
        if (last.includes('[block 1]')) return 'FINAL("done")';
        return repl('sub = await rlm_query("Add the numbers", "1 2 3")\nprint("sub said", sub)');
      }
      if (req.depth === 1) {
        if (last.includes('[block 1]')) return 'FINAL_VAR(leaf)';
        return repl('leaf = await llm_query("compute " + context)');
      }
      return 'six';
    });
    const { rlm, sandboxes } = setup(model);
    const r = await rlm.answer({ question: 'q', context: 'ctx' });
    expect(r).toMatchObject({ answer: 'done', status: 'final', subCalls: 2, maxDepthReached: 2 });
    expect(sandboxes.created).toHaveLength(2);
    expect(sandboxes.created[1]?.host.context).toBe('1 2 3');
    expect(sandboxes.created.every((s) => s.disposed)).toBe(true);
    // The sub-RLM got the sub prompt and its short context inline.
    const sub = model.at(1)[0] as ModelRequest;
    expect(sub.system).toMatch(/^You are a sub-call inside a larger analysis/);
    expect(lastUser(sub)).toContain('Add the numbers');
    expect(lastUser(sub)).toContain('1 2 3');
    // The leaf is a plain completion: leaf prompt, prompt plus context, no REPL.
    const leaf = model.at(2)[0] as ModelRequest;
    expect(leaf.system).toBe(LEAF_PROMPT);
    expect(leaf.messages).toEqual([{ role: 'user', content: 'compute 1 2 3' }]);
    expect(lastUser(model.at(0)[1] as ModelRequest)).toContain('sub said six');
    expect(model.requests.every((q) => q.depth <= 2)).toBe(true);
  });

  it('with maxDepth 1 sub-calls are plain leaves (rlm-minimal)', async () => {
    const model = new FnModel((req) =>
      req.depth === 1
        ? `leaf:${lastUser(req).length}`
        : lastUser(req).includes('[block')
          ? 'FINAL("x")'
          : repl('print(await llm_query("hi"))'),
    );
    const { rlm, sandboxes } = setup(model, { maxDepth: 1 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ status: 'final', subCalls: 1, maxDepthReached: 1 });
    expect(sandboxes.created).toHaveLength(1);
    expect(model.at(1)[0]?.system).toBe(LEAF_PROMPT);
  });

  it('never runs anything beyond maxDepth: llm_query returns a DEPTH_EXCEEDED error string', async () => {
    const model = new FnModel((req) =>
      lastUser(req).includes('[block') ? 'FINAL("x")' : repl('print(await llm_query("deeper?"))'),
    );
    const { rlm } = setup(model, { maxDepth: 0 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ status: 'final', subCalls: 0, maxDepthReached: 0 });
    expect(model.requests.every((q) => q.depth === 0)).toBe(true);
    expect(lastUser(model.requests[1] as ModelRequest)).toContain('Error: DEPTH_EXCEEDED');
    expect(model.requests[0]?.system).toContain(
      '`llm_query` and `rlm_query` are not available at this depth',
    );
  });

  it('bounds batched concurrency and turns one failure into an error string', async () => {
    let inFlight = 0;
    let peak = 0;
    // The first calls wait until three are in flight at once, so the bound is reached however slowly
    // the machine starts them; a fourth at once would show in the peak.
    const { promise: boundReached, resolve: reachBound } = Promise.withResolvers<void>();
    const model = new FnModel(async (req) => {
      if (req.depth === 0) {
        if (lastUser(req).includes('[block')) return 'FINAL("ok")';
        return repl(
          'const ps = []; for (let i = 0; i < 10; i++) ps.push(i === 4 ? "fail" : "item " + i)\n' +
            'answers = await llm_query_batched(ps)\nprint(JSON.stringify(answers))',
        );
      }
      inFlight++;
      peak = Math.max(peak, inFlight);
      if (inFlight === 3) reachBound();
      await boundReached;
      await sleep(1);
      inFlight--;
      if (lastUser(req) === 'fail') throw new Error('rate limited');
      return `re:${lastUser(req)}`;
    });
    const { rlm, sandboxes } = setup(model, { maxDepth: 1, subCallConcurrency: 3 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('final');
    expect(peak).toBe(3);
    const answers = JSON.parse((await sandboxes.created[0]?.readVariable('answers')) ?? '[]') as string[];
    expect(answers).toHaveLength(10);
    expect(answers[0]).toBe('re:item 0');
    expect(answers[9]).toBe('re:item 9');
    expect(answers[4]).toBe('Error: PROVIDER: fake:model: rate limited');
    expect(r.subCalls).toBe(10);
  });

  it('answers identical sub-calls from the cache, keyed by prompt and context', async () => {
    const model = new FnModel((req) => {
      if (req.depth === 1) return `answer ${model.at(1).length}`;
      if (lastUser(req).includes('[block')) return 'FINAL("ok")';
      return repl(
        'a = await llm_query("same", "ctx")\nb = await llm_query("same", "ctx")\n' +
          'c = await llm_query("same", "other")\nd = await llm_query_batched(["same", "same"])',
      );
    });
    const { rlm, sandboxes } = setup(model, { maxDepth: 1 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    const sb = sandboxes.created[0]!;
    expect(await sb.readVariable('a')).toBe('answer 1');
    expect(await sb.readVariable('b')).toBe('answer 1');
    expect(await sb.readVariable('c')).toBe('answer 2');
    expect(await sb.readVariable('d')).toBe('["answer 3","answer 3"]');
    expect(model.at(1)).toHaveLength(3);
    expect(r.subCalls).toBe(3);
    expect(r.cacheHits).toBe(2);
  });

  it('can turn the cache off', async () => {
    const model = new FnModel((req) =>
      req.depth === 1
        ? 'x'
        : lastUser(req).includes('[block')
          ? 'FINAL("ok")'
          : repl('await llm_query("same"); await llm_query("same")'),
    );
    const { rlm } = setup(model, { maxDepth: 1, cache: false });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(model.at(1)).toHaveLength(2);
    expect(r.cacheHits).toBe(0);
  });

  it('refuses a leaf input larger than maxSubCallChars without calling the model', async () => {
    const model = new FnModel((req) =>
      req.depth === 1
        ? 'x'
        : lastUser(req).includes('[block')
          ? 'FINAL("ok")'
          : repl('print(await llm_query("summarise", "y".repeat(500)))'),
    );
    const { rlm } = setup(model, { maxDepth: 1, maxSubCallChars: 200 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(model.at(1)).toHaveLength(0);
    expect(r.subCalls).toBe(0);
    expect(lastUser(model.requests[1]!)).toMatch(
      /Error: BAD_INPUT: the prompt plus context is 509 characters/,
    );
  });

  it('returns a failing sub-RLM as an error string to its caller', async () => {
    const model = new FnModel((req) => {
      if (req.depth === 1) throw new Error('sub model down');
      return lastUser(req).includes('[block') ? 'FINAL("ok")' : repl('print(await llm_query("x", "y"))');
    });
    const { rlm } = setup(model);
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('final');
    expect(lastUser(model.requests.at(-1)!)).toContain('Error: PROVIDER: fake:model: sub model down');
  });

  it('uses subModel for every call below the root', async () => {
    const root = new FnModel(
      (req) => (lastUser(req).includes('[block') ? 'FINAL("ok")' : repl('print(await llm_query("x"))')),
      'fake:root',
    );
    const sub = new FnModel(() => 'from sub', 'fake:sub');
    const { rlm } = setup(root, { subModel: sub, maxDepth: 1 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(sub.requests).toHaveLength(1);
    expect(root.requests.every((q) => q.depth === 0)).toBe(true);
    expect(Object.keys(r.usageByModel ?? {}).sort()).toEqual(['fake:root', 'fake:sub']);
    expect(r.usageByModel?.['fake:sub']?.calls).toBe(1);
  });
});
