/**
 * Replies a capable model actually wrote while driving rlm (test/fixtures/model-replies/, copied from the
 * shared recordings). Every reply must parse and validate, and every run whose context can be rebuilt is
 * replayed through the real loop and sandbox: it must end the way the model meant, with the answer it
 * gave. The recordings predate the sub-call split: their `llm_query` was the recursive call, so it is
 * read as today's `rlm_query` (as the fixtures' README says).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scoreAnswer } from '../../benchmarks/scoring.ts';
import { generateTask } from '../../benchmarks/tasks/index.ts';
import type { SuiteName } from '../../benchmarks/tasks/types.ts';
import { parseReply } from '../../src/runtime/parse.ts';
import { ReplayModel } from '../../src/runtime/providers/replay.ts';
import { RLM } from '../../src/runtime/rlm.ts';
import type { FinalEvent } from '../../src/runtime/trace.ts';
import { validateBlock } from '../../src/sandbox/validate.ts';
import { ROOMY_LIMITS } from '../sandbox/roomy-limits.ts';

interface Recording {
  question: string;
  context: string;
  status: string;
  iterations: number;
  subCalls: number;
  replies: { call: number; depth: number; turn: number; reply: string }[];
}

const DIR = path.join(import.meta.dirname, '../fixtures/model-replies');
const runs = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({
    name: f.replace(/\.json$/, ''),
    rec: JSON.parse(readFileSync(path.join(DIR, f), 'utf8')) as Recording,
  }));

/** The contexts that can be rebuilt (fixtures README). */
const TASKS: Record<string, { suite: SuiteName; size: number; seed: number; index: number }> = {
  'sniah-1048576': { suite: 'sniah', size: 1048576, seed: 7, index: 0 },
  'oolong-16384': { suite: 'oolong', size: 16384, seed: 11, index: 0 },
  'oolong-pairs-8192': { suite: 'oolong-pairs', size: 8192, seed: 13, index: 0 },
  'multihop-131072': { suite: 'multihop', size: 131072, seed: 5, index: 1 },
  'codeqa-65536': { suite: 'codeqa', size: 65536, seed: 3, index: 0 },
};

/** The recordings' recursive `llm_query` is today's `rlm_query`. */
const today = (reply: string): string => reply.replace(/\bllm_query(_batched)?\b/g, 'rlm_query$1');

describe('recorded model replies', () => {
  it('covers every recording', () => {
    expect(runs.map((r) => r.name).sort()).toEqual(
      [...Object.keys(TASKS), 'design-notes', 'node-types'].sort(),
    );
  });

  for (const { name, rec } of runs) {
    it(`${name}: every reply parses and every block validates`, () => {
      const roots = rec.replies.filter((r) => r.depth === 0);
      for (const r of rec.replies) {
        const parsed = parseReply(today(r.reply));
        expect(parsed.ignored, `call ${r.call}`).toEqual([]);
        for (const b of parsed.blocks) {
          const v = validateBlock(b.code);
          expect(v.ok ? 'ok' : v.issue.message, `call ${r.call} block at line ${b.line}`).toBe('ok');
        }
        // A reply either runs code or ends its run; narration never ends a run by accident.
        const ends = parsed.final !== null || parsed.blocks.some((b) => /\bFINAL(_VAR)?\(/.test(b.code));
        const last = r === roots.at(-1) || r.depth > 0;
        expect(ends, `call ${r.call} ends the run`).toBe(last && rec.status === 'final');
      }
      expect(roots).toHaveLength(rec.iterations);
    });
  }

  for (const { name, rec } of runs.filter((r) => TASKS[r.name] !== undefined)) {
    it(`${name}: replays through the loop and the sandbox to the model's answer`, async () => {
      const t = TASKS[name]!;
      const task = generateTask(t.suite, { size: t.size, seed: t.seed, index: t.index });
      expect(task.question).toBe(rec.question);
      const model = new ReplayModel(
        rec.replies.map((r) => ({
          span: `call-${r.call}`,
          depth: r.depth,
          kind: 'turn' as const,
          iteration: r.turn,
          reply: today(r.reply),
          usage: { inputTokens: 0, outputTokens: 0 },
          model: 'recorded',
        })),
        { source: name },
      );
      // One sub-call at a time: the recorded sub-RLM replies answer the batches in order. Limits no
      // recorded block comes near, however loaded the machine: the replay is under test, not the limits.
      const finals: FinalEvent[] = [];
      const rlm = new RLM({
        model,
        env: {},
        subCallConcurrency: 1,
        maxIterations: 20,
        sandbox: ROOMY_LIMITS,
        onEvent: (e) => {
          if (e.type === 'final' && e.depth === 0) finals.push(e);
        },
      });
      const r = await rlm.answer({ question: rec.question, context: task.context });
      const said = (rec.replies.filter((x) => x.depth === 0).at(-1)?.reply ?? '').trim();
      expect(r.error).toBeUndefined();
      expect(r).toMatchObject({ status: 'final', iterations: rec.iterations, subCalls: rec.subCalls });
      // How the model ended its last reply: FINAL(literal) gives that literal back as the answer;
      // otherwise its last block named the variable holding the answer (FINAL_VAR), and the run ended there.
      const literal = /FINAL\((?:"([^"]*)"|([^)"'`]*))\)\s*(?:```\s*)?$/.exec(said);
      expect(said).toMatch(literal === null ? /FINAL_VAR\(/ : /FINAL\(/);
      expect(finals).toEqual([
        expect.objectContaining(literal === null ? { source: 'code' } : { answer: literal[1] ?? literal[2] }),
      ]);
      expect(finals[0]?.answer).toBe(r.answer);
      expect(scoreAnswer(r.answer, task.gold)).toBe(1);
    });
  }
});
