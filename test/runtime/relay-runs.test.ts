/**
 * Runs played through the `relay:` spec by an agent acting as the model: it saw only the request files
 * (system prompt, messages, outputs), never the context or the code. Their traces are kept in
 * test/fixtures/relay-runs/ and replayed here with the `replay:` spec through the real loop and sandbox,
 * over the same context rebuilt on disk (a store: test/runtime/parts-store.ts): each must end as the model
 * meant, with the gold answer.
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
import { FIRST_DISK_FULL, LAST_RECOVERY, QUESTION, writePartsStore } from './parts-store.ts';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/relay-runs');
const dir = tempDir('rlm-relay-runs-');

/**
 * How each run was started: the task, and the context as the model saw it (one file or a folder). The
 * `-2` runs were played with the prompts of issue 30 (grep's count mode, when code and when sub-calls fit).
 */
const RUNS: { trace: string; name: SuiteName; size: number; seed: number; iterations: number }[] = [
  { trace: 'sniah', name: 'sniah', size: 262144, seed: 21, iterations: 2 },
  { trace: 'multihop', name: 'multihop', size: 65536, seed: 9, iterations: 4 },
  { trace: 'codeqa', name: 'codeqa', size: 32768, seed: 4, iterations: 5 },
  { trace: 'oolong-2', name: 'oolong', size: 16384, seed: 7, iterations: 2 },
  { trace: 'codeqa-2', name: 'codeqa', size: 32768, seed: 11, iterations: 5 },
];

/**
 * Writes the context where the run read it: `NAME.txt`, or `NAME/doc-NNN.txt` for several documents, in a
 * folder of the run's own (the document paths the model saw start at `NAME`).
 */
function contextOnDisk(run: string, name: string, context: string | string[]): string {
  const base = path.join(dir, run);
  mkdirSync(base);
  if (!Array.isArray(context)) {
    const file = path.join(base, `${name}.txt`);
    writeFileSync(file, context);
    return file;
  }
  const folder = path.join(base, name);
  mkdirSync(folder);
  for (const [i, doc] of context.entries())
    writeFileSync(path.join(folder, `doc-${String(i).padStart(3, '0')}.txt`), doc);
  return folder;
}

describe('runs played through the relay', () => {
  // Over a store holding a big log in parts: the model found the facts in later parts by grep, read
  // around them with peek(document, documentOffset …), and answered.
  it('store-parts: replays to the answer the model gave, over a file stored in parts', async () => {
    const store = await writePartsStore(path.join(dir, 'store-parts'));
    const trace = path.join(FIXTURES, 'store-parts.trace.jsonl');
    const rlm = new RLM({ model: `replay:${trace}`, env: {}, sandbox: ROOMY_LIMITS });
    const r = await rlm.answer({ question: QUESTION, store });
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ status: 'final', iterations: 6 });
    expect(r.answer).toBe(`${FIRST_DISK_FULL.time}, ${LAST_RECOVERY.host}`);
  });

  for (const run of RUNS) {
    it(`${run.trace}: replays to the answer the model gave`, async () => {
      const task = generateTask(run.name, { size: run.size, seed: run.seed, index: 0 });
      const input = contextOnDisk(run.trace, run.name, task.context);
      const trace = path.join(FIXTURES, `${run.trace}.trace.jsonl`);
      // Limits no recorded block comes near, however loaded the machine: the replay is under test.
      const rlm = new RLM({ model: `replay:${trace}`, env: {}, sandbox: ROOMY_LIMITS });
      const r = await rlm.answer({ question: task.question, paths: [input] });
      expect(r.error).toBeUndefined();
      expect(r).toMatchObject({ status: 'final', iterations: run.iterations });
      expect(scoreAnswer(r.answer, task.gold)).toBe(1);
    });
  }
});
