/**
 * `replay:TRACE.jsonl`: a run recorded to a trace is reproduced offline, reply for reply, including
 * concurrent sub-RLMs; a run that goes past or away from the recording fails with a clear error.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { LEAF_PROMPT } from '../../../src/prompts/leaf.ts';
import { createModel } from '../../../src/runtime/providers/index.ts';
import { ReplayModel } from '../../../src/runtime/providers/replay.ts';
import { RLM } from '../../../src/runtime/rlm.ts';
import { parseTrace } from '../../../src/runtime/trace.ts';
import { tempDir } from '../../helpers/temp.ts';
import { FnModel, lastUser, repl } from '../helpers/fake-model.ts';

const dir = tempDir('rlm-replay-');

/**
 * A model whose three concurrent sub-RLMs answer their first turn in reverse order (piece 2, then 1, then
 * 0: each waits for the next one's answer), so replay must key on spans, not on order.
 */
function recordingModel(): FnModel {
  const answered = [0, 1, 2, 3].map(() => Promise.withResolvers<void>());
  answered[3]!.resolve();
  return new FnModel(async (req) => {
    const last = lastUser(req);
    if (req.depth === 2) return `leaf(${last.length})`;
    if (req.depth === 1) {
      if (last.includes('[block 1]')) return `Done.\nFINAL_VAR("out")`;
      const n = Number(/piece (\d)/.exec(last)?.[1] ?? 0);
      await answered[n + 1]!.promise;
      // The next one goes once this reply is on its way (later in the event loop than its handling).
      setImmediate(() => answered[n]!.resolve());
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
    // The sub-RLMs (spans s1, s2, s3 for pieces 0, 1, 2) answered their first turn in reverse order.
    const firstTurns = replies.filter((e) => e.depth === 1 && e.iteration === 1).map((e) => e.span);
    expect(firstTurns).toEqual(['s3', 's2', 's1']);

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
