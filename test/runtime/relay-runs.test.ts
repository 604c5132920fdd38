/**
 * Runs played through the `relay:` spec by an agent acting as the model: it saw only the request files
 * (system prompt, messages, outputs), never the context or the code. Their traces are kept in
 * test/fixtures/relay-runs/ and replayed here with the `replay:` spec through the real loop and sandbox,
 * over the same context rebuilt on disk: each must end as the model meant, with the gold answer.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scoreAnswer } from '../../benchmarks/scoring.ts';
import { generateTask } from '../../benchmarks/tasks/index.ts';
import type { SuiteName } from '../../benchmarks/tasks/types.ts';
import { RLM } from '../../src/runtime/rlm.ts';
import { tempDir } from '../helpers/temp.ts';
import { ROOMY_LIMITS } from '../sandbox/roomy-limits.ts';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/relay-runs');
const dir = tempDir('rlm-relay-runs-');

/** How each run was started: the task, and the context as the model saw it (one file or a folder). */
const RUNS: { name: SuiteName; size: number; seed: number; iterations: number }[] = [
  { name: 'sniah', size: 262144, seed: 21, iterations: 2 },
  { name: 'multihop', size: 65536, seed: 9, iterations: 4 },
  { name: 'codeqa', size: 32768, seed: 4, iterations: 5 },
];

/** Writes the context where the run read it: `NAME.txt`, or `NAME/doc-NNN.txt` for several documents. */
function contextOnDisk(name: string, context: string | string[]): string {
  if (!Array.isArray(context)) {
    const file = path.join(dir, `${name}.txt`);
    writeFileSync(file, context);
    return file;
  }
  const folder = path.join(dir, name);
  mkdirSync(folder);
  for (const [i, doc] of context.entries())
    writeFileSync(path.join(folder, `doc-${String(i).padStart(3, '0')}.txt`), doc);
  return folder;
}

describe('runs played through the relay', () => {
  for (const run of RUNS) {
    it(`${run.name}: replays to the answer the model gave`, async () => {
      const task = generateTask(run.name, { size: run.size, seed: run.seed, index: 0 });
      const input = contextOnDisk(run.name, task.context);
      const trace = path.join(FIXTURES, `${run.name}.trace.jsonl`);
      // Limits no recorded block comes near, however loaded the machine: the replay is under test.
      const rlm = new RLM({ model: `replay:${trace}`, env: {}, sandbox: ROOMY_LIMITS });
      const r = await rlm.answer({ question: task.question, paths: [input] });
      expect(r.error).toBeUndefined();
      expect(r).toMatchObject({ status: 'final', iterations: run.iterations });
      expect(scoreAnswer(r.answer, task.gold)).toBe(1);
    });
  }
});
