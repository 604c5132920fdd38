import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { directPrompt } from '../../../benchmarks/methods.ts';
import { heuristicLabel, LABEL_PROMPT } from '../../../benchmarks/policies/oolong.ts';
import { smokeRules, writeSmokePolicy } from '../../../benchmarks/policies/smoke.ts';
import { generateTask } from '../../../benchmarks/tasks/index.ts';
import { ScriptedModel } from '../../../src/runtime/providers/scripted.ts';
import { tempDir } from '../../helpers/temp.ts';

const ask = async (model: ScriptedModel, content: string, depth = 0) =>
  (await model.complete({ system: 's', messages: [{ role: 'user', content }], depth })).text;

describe('smoke policy', () => {
  it('round-trips through a rules file usable as scripted:FILE', async () => {
    const file = path.join(tempDir('rlm-smoke-'), 'smoke.json');
    writeSmokePolicy(file);
    const model = ScriptedModel.fromFile(file);
    const task = generateTask('sniah', { size: 8192, seed: 4, index: 0 });
    expect(await ask(model, directPrompt(task, 100_000))).toBe(task.gold.answer);
    expect(await ask(model, task.question)).toMatch(/^```repl\n[\s\S]*grep\('The magic number is/);
    expect(await ask(model, 'something else entirely')).toBe('unknown');
  });

  it('answers every suite question at the root with a repl block that has its parameters filled in', async () => {
    const model = new ScriptedModel(smokeRules());
    for (const suite of ['multihop', 'codeqa', 'oolong', 'oolong-pairs'] as const) {
      for (let index = 0; index < 4; index++) {
        const task = generateTask(suite, { size: 8192, seed: 2, index });
        const reply = await ask(model, task.question);
        expect(reply.startsWith('```repl\n')).toBe(true);
        // Every $n placeholder was substituted by the question's capture groups.
        expect(reply).not.toMatch(/\$[1-9]/);
        expect(() => new vm.Script(`(async () => {${reply.slice(8, -4)}})`)).not.toThrow();
      }
    }
  });

  it('labels lines in sub-calls exactly like the host heuristic', async () => {
    const model = new ScriptedModel(smokeRules());
    const reply = await ask(model, `${LABEL_PROMPT}\n\nThe context in full: ...`, 1);
    const lines = [
      'Who wrote Hamlet?',
      'What does NASA stand for?',
      'What do the letters GPS mean?',
      'Which river flows through Oslo?',
    ];
    let final = '';
    const code = reply.replace(/^```repl\n|\n```$/g, '');
    vm.runInNewContext(code, {
      context: lines.join('\n'),
      FINAL: (v: string) => {
        final = v;
      },
    });
    expect(JSON.parse(final)).toEqual(lines.map((l) => heuristicLabel(l)));
    expect(JSON.parse(final)).toEqual(['human', 'abbreviation', 'description', 'entity']);
  });
});
