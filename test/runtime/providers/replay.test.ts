/**
 * `replay:TRACE.jsonl`: a run recorded to a trace is reproduced offline, reply for reply, including
 * concurrent sub-RLMs; a run that goes past or away from the recording fails with a clear error.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { LEAF_PROMPT } from '../../../src/prompts/leaf.ts';
import { createModel } from '../../../src/runtime/providers/index.ts';
import { ReplayModel } from '../../../src/runtime/providers/replay.ts';
import { RLM } from '../../../src/runtime/rlm.ts';
import { parseTrace } from '../../../src/runtime/trace.ts';
import { FnModel, lastUser, repl } from '../helpers/fake-model.ts';

const dir = mkdtempSync(join(tmpdir(), 'rlm-replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A model whose sub-RLMs answer after a delay that reverses their order, so replay must key on spans. */
function recordingModel(): FnModel {
  return new FnModel(async (req) => {
    const last = lastUser(req);
    if (req.depth === 2) return `leaf(${last.length})`;
    if (req.depth === 1) {
      const n = Number(/piece (\d)/.exec(last)?.[1] ?? 0);
      await new Promise((r) => setTimeout(r, 40 - n * 10));
      if (last.includes('[block 1]')) return `Done.\nFINAL_VAR("out")`;
      return repl(`const out = "piece ${n}: " + context.length + " " + (await llm_query("size?", context))`);
    }
    if (last.includes('[block 1]')) return 'FINAL("all")';
    return repl(
      'const parts = await rlm_query_batched([0, 1, 2].map((i) => ({ prompt: "piece " + i, context: "x".repeat(10 + i) })));\nprint(parts.join("\\n"))',
    );
  });
}

describe('replay model', () => {
  it('reproduces a recorded run offline, concurrent sub-RLMs included', async () => {
    const trace = join(dir, 'run.jsonl');
    const live = recordingModel();
    const recorded = await new RLM({ model: live, env: {}, trace, inlineContextChars: 0 }).answer({
      question: 'q',
      context: 'ctx',
    });
    expect(recorded.status).toBe('final');
    const replies = parseTrace(readFileSync(trace, 'utf8')).filter((e) => e.type === 'model_call');
    expect(replies.length).toBe(live.requests.length);

    const replayed = await new RLM({ model: `replay:${trace}`, env: {}, inlineContextChars: 0 }).answer({
      question: 'q',
      context: 'ctx',
    });
    expect(replayed).toMatchObject({
      answer: recorded.answer,
      status: 'final',
      iterations: recorded.iterations,
      subCalls: recorded.subCalls,
      maxDepthReached: 2,
    });
    expect(replayed.usage.inputTokens).toBe(recorded.usage.inputTokens);
  });

  it('fails clearly when the run goes past the recording or asks for another kind of call', async () => {
    const model = new ReplayModel([
      {
        span: 'root',
        depth: 0,
        kind: 'turn',
        iteration: 1,
        reply: 'FINAL("x")',
        usage: { inputTokens: 1, outputTokens: 1 },
        model: 'm',
      },
    ]);
    const leaf = {
      system: LEAF_PROMPT,
      messages: [{ role: 'user' as const, content: 'q' }],
      depth: 0,
      span: 'root',
    };
    const err = await model.complete(leaf).catch((e: unknown) => e);
    expect(isRlmError(err) && err.code).toBe('SCRIPT_EXHAUSTED');
    expect((err as Error).message).toMatch(
      /diverged .* asks for a plain completion where the recording has a turn/,
    );
    const again = await model
      .complete({ system: 'x', messages: [{ role: 'user', content: 'q' }], depth: 0, span: 'root' })
      .catch((e: unknown) => e);
    expect((again as Error).message).toMatch(
      /no reply left for span root \(depth 0\); the run went past the recording \(1 replies recorded\)/,
    );
  });

  it('is a model spec; an unreadable or empty trace is BAD_INPUT without its content', () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, 'secret line that is not json\n');
    expect(() => createModel(`replay:${empty}`)).toThrow(/holds no model_call events/);
    expect(() => createModel(`replay:${empty}`)).not.toThrow(/secret/);
    expect(() => createModel(`replay:${join(dir, 'missing.jsonl')}`)).toThrow(
      /cannot read replay trace .*ENOENT/,
    );
    expect(() => createModel('replay:')).toThrow(/unknown model spec/);
  });
});
