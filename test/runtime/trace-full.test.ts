import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/runtime/options.ts';
import type { SpanNode } from '../../src/runtime/result.ts';
import { parseTrace, type TraceEvent } from '../../src/runtime/trace.ts';
import { renderTraceTree } from '../../src/runtime/trace-render.ts';
import { buildTrajectory } from '../../src/runtime/trajectory.ts';
import { tempDir } from '../helpers/temp.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

const dir = tempDir('rlm-trace-full-');

const LONG_PROMPT = `Summarise this: ${'lorem ipsum '.repeat(400)}`;

/**
 * Root: a turn that only prints, then a sub-RLM with a long prompt and a leaf below it. The sub-RLM runs
 * out of its turns so its last call (which rewrites the last message) is recorded too.
 */
function model(): FnModel {
  return new FnModel((req) => {
    const last = lastUser(req);
    if (req.depth === 2) return `leaf says ${'x'.repeat(3000)}`;
    if (req.depth === 1) {
      if (last.includes('final answer now') || last.includes('FINAL')) return 'FINAL(sub done)';
      return repl('const r = await llm_query("leaf q")\nprint(r.length)');
    }
    if (last.includes('[block 1') && last.includes('hello')) {
      return `Now the sub-call.\n${repl(`print(await rlm_query(${JSON.stringify(LONG_PROMPT)}))`)}`;
    }
    if (last.includes('[block')) return 'FINAL(root answer)';
    return repl('print("hello")');
  });
}

/** Rebuilds every request from the trace alone: system from the span's first request, then diffs. */
function rebuildRequests(events: TraceEvent[]): { system: string; messages: unknown[] }[] {
  const blobs = new Map<string, string>();
  const replies = new Map<string, string>();
  const convo = new Map<string, { system: string; messages: { role: string; content: string }[] }>();
  const out: { system: string; messages: unknown[] }[] = [];
  for (const e of events) {
    if (e.type === 'blob') blobs.set(e.id, e.text);
    if (e.type === 'model_call') replies.set(`${e.span}#${e.iteration}`, e.reply);
    if (e.type !== 'model_request') continue;
    const prev = convo.get(e.span) ?? { system: '', messages: [] };
    const system = e.system === undefined ? prev.system : (blobs.get(e.system) as string);
    const added = e.messages.map((m) => ({
      role: m.role,
      content:
        m.replyOf !== undefined
          ? (replies.get(`${e.span}#${m.replyOf}`) as string)
          : m.blob !== undefined
            ? (blobs.get(m.blob) as string)
            : (m.text as string),
    }));
    const next = { system, messages: [...prev.messages.slice(0, e.from), ...added] };
    convo.set(e.span, next);
    out.push(next);
  }
  return out;
}

describe('full trace', () => {
  it('records every request so that each can be rebuilt exactly, storing large texts once', async () => {
    const file = join(dir, 'full.jsonl');
    const m = model();
    const { rlm } = setup(m, { trace: file, maxSubIterations: 2 });
    const result = await rlm.answer({ question: 'What?', context: 'root ctx' });
    expect(result.answer).toBe('root answer');
    const events = parseTrace(readFileSync(file, 'utf8'));

    const rebuilt = rebuildRequests(events);
    expect(rebuilt).toHaveLength(m.requests.length);
    expect(rebuilt).toEqual(m.requests.map((r) => ({ system: r.system, messages: r.messages })));
    // The sub-RLM ran out of turns: its last call is there, with the rewritten last message.
    const kinds = events.filter((e) => e.type === 'model_request').map((e) => `${e.span}:${e.kind}`);
    expect(kinds).toContain('s1:last_call');

    // Requests carry what changed, not the whole conversation again; replies are referenced.
    const rootReqs = events.filter((e) => e.type === 'model_request' && e.span === 'root');
    expect(rootReqs.map((e) => e.type === 'model_request' && [e.from, e.messages.length])).toEqual([
      [0, 1],
      [1, 2],
      [3, 2],
    ]);
    const second = rootReqs[1];
    expect(second?.type === 'model_request' && second.messages[0]).toEqual({ role: 'assistant', replyOf: 1 });
    expect(second?.type === 'model_request' && second.system).toBeUndefined();

    // Each blob once per run; every reference points at a blob written before it.
    const blobIds = events.filter((e) => e.type === 'blob').map((e) => e.type === 'blob' && e.id);
    expect(new Set(blobIds).size).toBe(blobIds.length);
    const seen = new Set<string>();
    for (const e of events) {
      if (e.type === 'blob') seen.add(e.id);
      const refs =
        e.type === 'model_request'
          ? [e.system, ...e.messages.map((x) => x.blob)]
          : e.type === 'subcall_start'
            ? [e.promptBlob]
            : e.type === 'subcall_end'
              ? [e.answerBlob]
              : [];
      for (const r of refs) if (r !== undefined) expect(seen.has(r)).toBe(true);
    }

    // The long prompt and the long leaf answer are whole through their blobs; previews stay 2000 + '…'.
    const start = events.find((e) => e.type === 'subcall_start' && e.id === 's1');
    expect(start?.type === 'subcall_start' && start.prompt.length).toBe(2001);
    const tree = buildTrajectory(events);
    const sub = tree.root.turns[1]?.blocks[0]?.subcalls[0] as SpanNode;
    expect(sub.prompt).toBe(LONG_PROMPT);
    const leaf = sub.turns[0]?.blocks[0]?.subcalls[0] as SpanNode;
    expect(leaf.kind).toBe('leaf');
    expect(leaf.answer).toBe(`leaf says ${'x'.repeat(3000)}`);

    // `trace show --full` prints them whole too; the one-line view stays cut.
    const whole = renderTraceTree(events, { full: true });
    expect(whole).toContain(LONG_PROMPT);
    expect(whole).toContain(`⇐ leaf says ${'x'.repeat(3000)}`);
    expect(renderTraceTree(events)).not.toContain(LONG_PROMPT.slice(0, 300));
  });

  it('summary level writes no requests or blobs and cuts sub-call texts to previews', async () => {
    const file = join(dir, 'summary.jsonl');
    const { rlm } = setup(model(), { trace: file, maxSubIterations: 2, traceLevel: 'summary' });
    await rlm.answer({ question: 'What?', context: 'root ctx' });
    const events = parseTrace(readFileSync(file, 'utf8'));
    expect(events.some((e) => e.type === 'model_request' || e.type === 'blob')).toBe(false);
    const start = events.find((e) => e.type === 'subcall_start' && e.id === 's1');
    expect(start?.type === 'subcall_start' && start.promptBlob).toBeUndefined();
    expect(events.filter((e) => e.type === 'model_call').length).toBeGreaterThan(4);
    const fullSize = readFileSync(join(dir, 'full.jsonl')).length;
    expect(readFileSync(file).length).toBeLessThan(fullSize * 0.7);
  });

  it('puts the trajectory on the result only when asked', async () => {
    const plain = await setup(model(), { maxSubIterations: 2 }).rlm.answer({ question: 'Q', context: 'c' });
    expect(plain.trajectory).toBeUndefined();
    const { rlm } = setup(model(), { maxSubIterations: 2, trajectory: true });
    const r = await rlm.answer({ question: 'Q', context: 'c' });
    const t = r.trajectory;
    expect(t?.run).toBe(r.runId);
    expect(t?.question).toBe('Q');
    expect(t?.result?.answer).toBe('root answer');
    expect(t?.root.turns.map((x) => x.iteration)).toEqual([1, 2, 3]);
    expect(t?.root.turns[0]?.request?.messages[0]?.content).toContain('Q');
    expect(t?.root.system).toContain('repl');
    const sub = t?.root.turns[1]?.blocks[0]?.subcalls[0];
    expect(sub?.depth).toBe(1);
    expect(sub?.status).toBe('max_iterations');
    expect(sub?.answer).toBe('sub done');
    expect(sub?.turns.at(-1)?.kind).toBe('last_call');
    // Totals add up to the run's usage.
    expect(t?.root.totals.inputTokens).toBe(r.usage.inputTokens);
    expect(t?.root.totals.outputTokens).toBe(r.usage.outputTokens);
    expect(t?.root.totals.subCalls).toBe(r.subCalls + (r.cacheHits ?? 0));
    expect(r.cacheHits).toBe(1);
  });

  it('validates the trace level from options and env', () => {
    expect(resolveOptions({ model: 'm' }, {}).traceLevel).toBe('full');
    expect(resolveOptions({ model: 'm' }, { RLM_TRACE_LEVEL: 'summary' }).traceLevel).toBe('summary');
    expect(() => resolveOptions({ model: 'm' }, { RLM_TRACE_LEVEL: 'verbose' })).toThrow(
      /RLM_TRACE_LEVEL must be one of summary, full, got "verbose"/,
    );
    expect(() => resolveOptions({ model: 'm', traceLevel: 'all' as 'full' }, {})).toThrow(
      expect.objectContaining({ code: 'VALIDATION', message: expect.stringMatching(/^traceLevel must be/) }),
    );
  });
});
