/**
 * Model code and the model's prompt name models by spec kind and name, never by a host path
 * (runtime/model-name.ts); every message a sub-call gives model code is free of host paths
 * (RunState.forSandbox). Generated over the spec kinds that carry a path and the four sub-call entry
 * points.
 */
import { describe, expect, it } from 'vitest';
import { RlmError } from '../../core/errors.ts';
import type { ModelRequest } from '../../src/runtime/model.ts';
import { modelAliases, modelName } from '../../src/runtime/model-name.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

const HOST = '/home/alice/private/project';
const PATH_SPECS = [`scripted:${HOST}/rules.json`, `replay:${HOST}/run.jsonl`, `relay:${HOST}/relay`];

describe('modelName', () => {
  it('names path-carrying specs by kind and file name, the others by their spec', () => {
    expect(PATH_SPECS.map(modelName)).toEqual(['scripted:rules.json', 'replay:run.jsonl', 'relay:relay']);
    expect(modelName('scripted:examples\\win\\rules.json')).toBe('scripted:rules.json');
    expect(modelName(' anthropic:claude-haiku-4-5 ')).toBe('anthropic:claude-haiku-4-5');
    expect(modelName('claude-code')).toBe('claude-code');
    expect(modelAliases('anthropic:x')).toEqual([]);
    expect(modelAliases(`scripted:${HOST}/rules.json`)).toEqual([
      [`scripted:${HOST}/rules.json`, 'scripted:rules.json'],
      [`${HOST}/rules.json`, 'rules.json'],
    ]);
  });
});

const ENTRY_POINTS = [
  'await llm_query("q", null, {model: "nope"})',
  'await rlm_query("q", null, {model: "nope"})',
  '(await llm_query_batched([{prompt: "q", model: "nope"}]))[0]',
  '(await rlm_query_batched([{prompt: "q", model: "nope"}]))[0]',
];

describe('what sub-calls tell model code', () => {
  for (const spec of PATH_SPECS) {
    for (const call of ENTRY_POINTS) {
      it(`${spec.split(':')[0]}: ${call.split('(')[0]} names the configured models without a host path`, async () => {
        const sub = new FnModel(() => 'sub answer', spec);
        const main = new FnModel((req: ModelRequest) =>
          lastUser(req).includes('[block') ? 'FINAL(done)' : repl(`x = ${call}`),
        );
        const { rlm, sandboxes } = setup(main, { subModel: sub, maxDepth: 2 });
        await rlm.answer({ question: 'q', context: 'c' });
        const x = (await sandboxes.created[0]?.readVariable('x')) ?? '';
        expect(x).toMatch(/^Error: BAD_INPUT: no model "nope" is configured; use one of /);
        expect(x).toContain(modelName(spec));
        expect(x).not.toContain('/home/alice');
        // The prompt lists the same names, and a sub-call may use one.
        expect(main.requests[0]?.system).toContain(modelName(spec));
        expect(main.requests[0]?.system).not.toContain('/home/alice');
      });
    }
  }

  it('a failing model reaches model code by name, its error without host paths', async () => {
    const spec = `replay:${HOST}/run.jsonl`;
    const sub = new FnModel(() => {
      throw new RlmError(
        'SCRIPT_EXHAUSTED',
        `replay: ${HOST}/run.jsonl has no reply left (see ./notes/x.md)`,
      );
    }, spec);
    const main = new FnModel((req: ModelRequest) =>
      lastUser(req).includes('[block')
        ? 'FINAL(done)'
        : repl(`x = await llm_query("q", null, {model: ${JSON.stringify(modelName(spec))}})`),
    );
    const { rlm, sandboxes } = setup(main, { subModel: sub });
    await rlm.answer({ question: 'q', context: 'c' });
    expect(await sandboxes.created[0]?.readVariable('x')).toBe(
      'Error: SCRIPT_EXHAUSTED: replay: run.jsonl has no reply left (see <path>)',
    );
  });
});
