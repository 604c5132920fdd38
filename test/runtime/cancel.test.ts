import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/runtime/model.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

/** A model call that only ends when its signal fires (or never, when `ignoreSignal`). */
function hang(req: ModelRequest, ignoreSignal = false): Promise<string> {
  return new Promise((_resolve, reject) => {
    if (!ignoreSignal) req.signal?.addEventListener('abort', () => reject(new Error('aborted by signal')));
  });
}

describe('cancellation', () => {
  it('stops a running block that would never end, and disposes the sandbox', async () => {
    const ctl = new AbortController();
    const { rlm, sandboxes } = setup(() => `Still reading.\n${repl('await hang()')}`);
    // Aborted once the block runs; the run can only return by not waiting for it.
    void sandboxes.hanging.then(() => ctl.abort());
    const r = await rlm.answer({ question: 'q', context: 'c', signal: ctl.signal });
    expect(r.status).toBe('aborted');
    expect(r.error?.code).toBe('ABORTED');
    expect(r.answer).toBe('Still reading.');
    expect(sandboxes.created[0]?.disposed).toBe(true);
  });

  it('stops a model call that ignores its signal', async () => {
    const ctl = new AbortController();
    const { rlm } = setup((req) => {
      // Aborted while this call is in flight.
      queueMicrotask(() => ctl.abort());
      return hang(req, true);
    });
    const r = await rlm.answer({ question: 'q', context: 'c', signal: ctl.signal });
    expect(r.status).toBe('aborted');
    expect(r.iterations).toBe(1);
  });

  it('reaches sub-calls: their model calls see the abort', async () => {
    const ctl = new AbortController();
    const subSignals: AbortSignal[] = [];
    const model = new FnModel((req) => {
      if (req.depth === 0) return repl('print(await llm_query_batched(["a", "b"]))');
      if (req.signal) subSignals.push(req.signal);
      // Aborted once both sub-calls are in flight.
      if (subSignals.length === 2) queueMicrotask(() => ctl.abort());
      return hang(req);
    });
    const { rlm } = setup(model, { maxDepth: 1 });
    const r = await rlm.answer({ question: 'q', context: 'c', signal: ctl.signal });
    expect(r.status).toBe('aborted');
    expect(subSignals).toHaveLength(2);
    expect(subSignals.every((s) => s.aborted)).toBe(true);
  });

  it('honours the instance-wide signal and an already aborted one', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const { rlm, model } = setup(() => 'FINAL("x")', { signal: ctl.signal });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r.status).toBe('aborted');
    expect(model.requests).toHaveLength(0);
  });

  it('does not let one run abort the next', async () => {
    const ctl = new AbortController();
    const { rlm } = setup((req) => (lastUser(req).includes('[block') ? 'FINAL("ok")' : repl('print(1)')));
    const first = await rlm.answer({ question: 'q', context: 'c', signal: ctl.signal });
    ctl.abort();
    const second = await rlm.answer({ question: 'q', context: 'c' });
    expect([first.status, second.status]).toEqual(['final', 'final']);
  });
});
