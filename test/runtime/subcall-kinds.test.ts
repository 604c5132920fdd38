/**
 * The two sub-calls (CONTRACTS.md, "Depth and the two sub-calls"): llm_query is one plain completion at any depth,
 * rlm_query a sub-RLM below maxDepth; batched items as strings or {prompt, context, model}; per-call models;
 * and batches of tens of thousands of items that keep the budget and the event loop.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LEAF_PROMPT } from '../../src/prompts/leaf.ts';
import type { ModelRequest } from '../../src/runtime/model.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

const root = (code: string) => (req: ModelRequest) =>
  lastUser(req).includes('[block') ? 'FINAL("ok")' : repl(code);

describe('llm_query vs rlm_query', () => {
  it('llm_query is one plain completion even where a sub-RLM could run', async () => {
    const model = new FnModel((req) =>
      req.depth === 1 ? 'plain answer' : root('x = await llm_query("Summarise", "some text")')(req),
    );
    const { rlm, sandboxes } = setup(model, { maxDepth: 2 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ status: 'final', subCalls: 1, maxDepthReached: 1 });
    expect(sandboxes.created).toHaveLength(1);
    const leaf = model.at(1)[0] as ModelRequest;
    expect(leaf.system).toBe(LEAF_PROMPT);
    expect(leaf.messages[0]?.content).toBe('Summarise\n\n--- Text ---\nsome text');
    expect(await sandboxes.created[0]?.readVariable('x')).toBe('plain answer');
  });

  it('rlm_query runs a sub-RLM over its context, and degrades to a plain completion at maxDepth', async () => {
    const model = new FnModel((req) => {
      if (req.depth === 2) return 'leaf';
      if (req.depth === 1) {
        return lastUser(req).includes('[block')
          ? 'FINAL_VAR(n)'
          : repl('n = context.length + ":" + (await rlm_query("deeper"))');
      }
      return root('x = await rlm_query("Count", "abcdef")')(req);
    });
    const { rlm, sandboxes } = setup(model, { maxDepth: 2 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ status: 'final', subCalls: 2, maxDepthReached: 2 });
    expect(sandboxes.created[1]?.host.context).toBe('abcdef');
    expect(model.at(2)[0]?.system).toBe(LEAF_PROMPT);
    expect(await sandboxes.created[0]?.readVariable('x')).toBe('6:leaf');
  });

  it('batched items may be strings or {prompt, context, model}; a per-call model picks a configured spec', async () => {
    const cheap = new FnModel((req) => `cheap:${lastUser(req).split('\n')[0]}`, 'fake:cheap');
    const main = new FnModel(
      (req) =>
        req.depth === 1
          ? `main:${lastUser(req).split('\n')[0]}`
          : root(
              'x = await llm_query_batched(["a", {prompt: "b", context: "B"}, {prompt: "c", model: "fake:cheap"}, ' +
                '{prompt: "d", model: "nope:x"}])\nprint(JSON.stringify(x))',
            )(req),
      'fake:main',
    );
    const { rlm, sandboxes } = setup(main, { models: [cheap] });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    const x = JSON.parse((await sandboxes.created[0]?.readVariable('x')) ?? '[]') as string[];
    expect(x.slice(0, 3)).toEqual(['main:a', 'main:b', 'cheap:c']);
    expect(x[3]).toMatch(
      /^Error: BAD_INPUT: no model "nope:x" is configured; use one of fake:main, fake:cheap/,
    );
    expect(main.at(1)[1]?.messages[0]?.content).toBe('b\n\n--- Text ---\nB');
    expect(r.usageByModel?.['fake:cheap']?.calls).toBe(1);
  });

  it('rlm_query_batched gives each piece its own sub-RLM context', async () => {
    const model = new FnModel((req) => {
      if (req.depth === 1)
        return lastUser(req).includes('[block') ? 'FINAL_VAR(len)' : repl('len = context.length');
      return root(
        'x = await rlm_query_batched([{prompt: "len?", context: "abc"}, {prompt: "len?", context: "abcdefg"}])',
      )(req);
    });
    const { rlm, sandboxes } = setup(model, { inlineContextChars: 0 });
    await rlm.answer({ question: 'q', context: 'c' });
    expect(await sandboxes.created[0]?.readVariable('x')).toBe('["3","7"]');
  });
});

describe('large batches', () => {
  it('checks the budget before fanning out: the excess is refused at once, the run goes on', async () => {
    const model = new FnModel((req) =>
      req.depth === 1
        ? 'label'
        : root(
            'items = []; for (let i = 0; i < 30000; i++) items.push("classify line " + i)\n' +
              'x = await llm_query_batched(items)\n' +
              'errors = x.filter((a) => a.startsWith("Error: BUDGET_EXCEEDED")).length',
          )(req),
    );
    const { rlm, sandboxes } = setup(model, { maxSubCalls: 500 });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('final');
    expect(model.at(1)).toHaveLength(500);
    expect(r.subCalls).toBe(500);
    expect(await sandboxes.created[0]?.readVariable('errors')).toBe('29500');
  });

  it('keeps the event loop turning and abort listeners bounded over 30,000 items', async () => {
    let maxListeners = 0;
    const model = new FnModel((req) => {
      if (req.depth === 0) {
        return root(
          'items = []; for (let i = 0; i < 30000; i++) items.push({prompt: "line " + i})\n' +
            'x = await llm_query_batched(items)\nn = x.length',
        )(req);
      }
      if (req.signal) maxListeners = Math.max(maxListeners, getEventListeners(req.signal, 'abort').length);
      return 'ok';
    });
    const { rlm, sandboxes } = setup(model, {
      subCallConcurrency: 8,
      cache: false,
      maxSubCalls: Number.POSITIVE_INFINITY,
    });
    let ticks = 0;
    let running = true;
    const tick = (): void => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const r = await rlm.answer({ question: 'q', context: 'c' });
    running = false;
    expect(r.status).toBe('final');
    expect(await sandboxes.created[0]?.readVariable('n')).toBe('30000');
    // Without yielding, the whole batch would settle in microtasks and the probe would not run at all.
    expect(ticks).toBeGreaterThan(20);
    // Listeners on the batch's signal stay bounded by the concurrency, not the batch size.
    expect(maxListeners).toBeLessThanOrEqual(4 * 8);
    expect(model.at(1)).toHaveLength(30_000);
  });
});
