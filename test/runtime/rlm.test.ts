import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { ScriptedModel } from '../../src/runtime/providers/scripted.ts';
import { RLM } from '../../src/runtime/rlm.ts';
import { contextStrings } from '../../src/sandbox/host.ts';
import { tempDir } from '../helpers/temp.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { fakeSandboxes } from './helpers/fake-sandbox.ts';
import { setup } from './helpers/setup.ts';

const dir = tempDir('rlm-answer-');

const answerAfterLook = () =>
  new FnModel((req) => (lastUser(req).includes('[block') ? 'FINAL("seen")' : repl('print(typeof context)')));

describe('RLM.answer inputs', () => {
  it('states the context size and shape in the system prompt', async () => {
    const { rlm, model } = setup(answerAfterLook());
    await rlm.answer({ question: 'q', context: ['alpha', 'beta gamma'] });
    expect(model.requests[0]?.system).toContain(
      'The context is 2 documents, 15 characters in total (~4 tokens).',
    );
    expect(model.requests[0]?.system).toContain('Document lengths: 5, 10.');
  });

  it('reads paths as the context and hands the sandbox an index built on first use', async () => {
    const a = join(dir, 'a.md');
    const b = join(dir, 'b.txt');
    writeFileSync(a, '# Title\n\nThe launch is on Tuesday.\n');
    writeFileSync(b, 'Budget: 40 units.\n');
    const { rlm, model, sandboxes } = setup(answerAfterLook());
    const r = await rlm.answer({ question: 'When?', paths: [a, b] });
    expect(r.status).toBe('final');
    const host = sandboxes.created[0]!.host;
    // The host keeps no text: the files are the context, read again when a session needs them.
    expect(host.context).toBeUndefined();
    expect([...((await contextStrings(host)) as string[])].sort()).toEqual([
      '# Title\n\nThe launch is on Tuesday.\n',
      'Budget: 40 units.\n',
    ]);
    // Sizes and paths from reading; chunks are counted when the index is built, on first use.
    expect(model.requests[0]?.system).toContain(
      'The context is 2 documents, 53 characters in total (~14 tokens).',
    );
    expect(model.requests[0]?.system).toMatch(
      /- rlm-answer-\w+\/a.md \(35 chars\)\n- rlm-answer-\w+\/b.txt \(18 chars\)/,
    );
    expect(model.requests[0]?.system).toContain('search_chunks(query');
    // The index is built by the first call that needs it (test/runtime/lazy-index.test.ts).
    expect(typeof host.store).toBe('function');
  });

  it('passes an open store through without loading a context', async () => {
    const store = new MemoryChunkStore();
    await store.ingestText('notes', 'Alice met Bob.\n\nThey talked about trains.');
    const { rlm, model, sandboxes } = setup(answerAfterLook());
    await rlm.answer({ question: 'Who?', store });
    expect(sandboxes.created[0]!.host.store).toBe(store);
    expect(sandboxes.created[0]!.host.context).toBeUndefined();
    expect(model.requests[0]?.system).toContain('`context`: not loaded; use the functions below.');
  });

  it('throws STORE_MISSING for a folder without a store, and BAD_INPUT for bad input', async () => {
    const { rlm } = setup(answerAfterLook());
    const missing = await rlm.answer({ question: 'q', store: join(dir, 'nope') }).catch((e: unknown) => e);
    expect(isRlmError(missing, 'STORE_MISSING')).toBe(true);
    const empty = await rlm.answer({ question: '  ', context: 'c' }).catch((e: unknown) => e);
    expect(isRlmError(empty, 'BAD_INPUT')).toBe(true);
    const both = await rlm.answer({ question: 'q', paths: [dir], store: dir }).catch((e: unknown) => e);
    expect(isRlmError(both, 'BAD_INPUT')).toBe(true);
  });

  it('answers a question with no context at all', async () => {
    const { rlm, model } = setup(() => 'FINAL(4)');
    const r = await rlm.answer({ question: '2 + 2?' });
    expect(r.answer).toBe('4');
    expect(model.requests[0]?.system).toContain('There is no context for this request');
  });

  it('builds models from specs through the model factory, sharing one instance when the specs match', async () => {
    const made: string[] = [];
    const sandboxes = fakeSandboxes();
    const rlm = new RLM({
      env: { RLM_MODEL: 'scripted:rules.json' },
      sandboxFactory: sandboxes.factory,
      modelFactory: async (spec) => {
        made.push(spec);
        return new ScriptedModel(
          [
            { depth: 0, match: '\\[block', reply: 'FINAL(from $0)' },
            { depth: 0, reply: repl('print(await llm_query("hi"))') },
            { depth: 1, reply: 'FINAL(sub-answer)' },
          ],
          { spec, countTokens: (t) => t.length },
        );
      },
    });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(made).toEqual(['scripted:rules.json']);
    expect(r.status).toBe('final');
    expect(r.subCalls).toBe(1);
    expect(r.usageByModel?.['scripted:rules.json']?.calls).toBe(3);
  });
});
