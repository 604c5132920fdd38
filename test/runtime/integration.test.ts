/**
 * The loop against the real isolated-vm sandbox (src/sandbox/session.ts) and the scripted provider:
 * persistence across blocks, FINAL_VAR, recursion with a sandbox per sub-RLM, batching and abort.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/runtime/model.ts';
import { ScriptedModel } from '../../src/runtime/providers/scripted.ts';
import { RLM } from '../../src/runtime/rlm.ts';
import type { TraceEvent } from '../../src/runtime/trace.ts';
import type { SandboxHost } from '../../src/sandbox/host.ts';
import { createSandbox, type IsolateSandbox } from '../../src/sandbox/session.ts';
import type { SandboxLimits } from '../../src/sandbox/types.ts';
import { gone } from '../helpers/process.ts';
import { tempDir } from '../helpers/temp.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';

const countTokens = (t: string) => Math.ceil(t.length / 4);

describe('RLM with the isolated-vm sandbox', () => {
  it('keeps declarations across blocks and turns, and resolves FINAL_VAR in the reply text', async () => {
    const model = new ScriptedModel(
      [
        { depth: 0, match: 'tally', reply: 'Got it.\nFINAL_VAR(answer)' },
        { depth: 0, match: 'words', reply: repl('const answer = "tally=" + words.length;\nprint(answer)') },
        { depth: 0, reply: repl('const words = context.split(/\\s+/);\nprint("words", words.length)') },
      ],
      { countTokens },
    );
    const rlm = new RLM({ model, env: {} });
    const r = await rlm.answer({ question: 'How many?', context: 'one two three four' });
    expect(r).toMatchObject({ answer: 'tally=4', status: 'final', iterations: 3 });
  });

  it('recurses: root → sub-RLM with its own sandbox → plain leaf, rlm_query and llm_query with and without await', async () => {
    const events: TraceEvent[] = [];
    const model = new FnModel((req: ModelRequest) => {
      const last = lastUser(req);
      if (req.depth === 2) return `leaf saw ${last.length} chars`;
      if (req.depth === 1) {
        if (last.includes('[block 1]')) return "FINAL_VAR('out')";
        return repl('const out = llm_query("Count: " + context.slice(0, 10))\nprint(out)');
      }
      if (last.includes('[block 1]')) return `Done.\n${repl('FINAL(results.join(" | "))')}`;
      return repl(
        'const results = await rlm_query_batched(["a", "b"]);\nconst one = await rlm_query("x", context);',
      );
    });
    const rlm = new RLM({ model, env: {}, onEvent: (e) => events.push(e) });
    const r = await rlm.answer({ question: 'q', context: 'abcdefghijklmnopqrstuvwxyz' });
    expect(r.status).toBe('final');
    // Three sub-RLMs (two batched, one with the root's context), each with its own session, each calling a leaf.
    expect(r.maxDepthReached).toBe(2);
    expect(model.at(2).length).toBeGreaterThan(0);
    expect(model.requests.every((q) => q.depth <= 2)).toBe(true);
    const subSpans = new Set(events.filter((e) => e.type === 'block' && e.depth === 1).map((e) => e.span));
    expect(subSpans.size).toBe(3);
    expect(r.answer).toMatch(/^leaf saw \d+ chars \| leaf saw \d+ chars$/);
  });

  it('aborts a CPU-bound block and ends its process', async () => {
    const ctl = new AbortController();
    const model = new FnModel((req) => {
      // The block is running: it asked this sub-call. Abort as it goes on into its endless loop.
      if (req.depth === 1) {
        queueMicrotask(() => ctl.abort());
        return 'go on';
      }
      return `Spinning.\n${repl('try { llm_query("started") } catch {}\nwhile (true) {}')}`;
    });
    const pids: number[] = [];
    const sandboxFactory = async (host: SandboxHost, limits?: SandboxLimits) => {
      const sb = (await createSandbox(host, limits)) as IsolateSandbox;
      pids.push(sb.pid!);
      return sb;
    };
    const rlm = new RLM({ model, env: {}, sandbox: { cpuMs: 600_000 }, sandboxFactory });
    const r = await rlm.answer({ question: 'q', context: 'c', signal: ctl.signal });
    expect(r.status).toBe('aborted');
    expect(r.answer).toBe('Spinning.');
    expect(pids).toHaveLength(1);
    await gone(pids[0]!);
  });

  it('reports a model code error back, then finishes', async () => {
    const model = new FnModel((req) =>
      lastUser(req).includes('[block 1]') ? 'FINAL("recovered")' : repl('const x = 1;\nundefinedFunction()'),
    );
    const rlm = new RLM({ model, env: {} });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ answer: 'recovered', status: 'final' });
    expect(lastUser(model.requests[1]!)).toMatch(/Error \(RUNTIME at line 2.*undefinedFunction/);
  });

  it('cuts block output once, with the true count of omitted characters', async () => {
    const model = new FnModel((req) =>
      lastUser(req).includes('[block 1]') ? 'FINAL("x")' : repl('print("HEAD" + "x".repeat(5000) + "TAIL")'),
    );
    const rlm = new RLM({ model, env: {}, maxOutputCharsPerBlock: 300 });
    await rlm.answer({ question: 'q', context: 'c' });
    const fed = lastUser(model.requests[1]!);
    const block = fed.slice(fed.indexOf('[block 1]\n') + 10, fed.indexOf('\n\n[turn'));
    expect(block.startsWith('HEAD')).toBe(true);
    expect(block).toContain('TAIL');
    // 5,008 characters and a newline printed, 300 kept.
    expect(block).toContain('[4709 characters of output omitted]');
    expect(block.match(/omitted/g)).toHaveLength(1);
  });

  it('answers FINAL(name) in prose with the variable when it is defined, literally when not', async () => {
    const run = async (final: string) => {
      const model = new FnModel((req) =>
        lastUser(req).includes('[block 1]')
          ? `Verified.\n${final}`
          : repl('const total = 6 * 7;\nconst parts = ["a", "b"];\nprint(total)'),
      );
      return new RLM({ model, env: {} }).answer({ question: 'q', context: 'c' });
    };
    expect((await run('FINAL(total)')).answer).toBe('42');
    expect((await run('FINAL(parts)')).answer).toBe('["a","b"]');
  });

  it('takes a bare FINAL word the run has shown as meant, and sends any other back as a likely typo', async () => {
    const run = async (question: string, final: string) => {
      const model = new FnModel((req) => {
        const last = lastUser(req);
        if (last.includes('looks like a typo')) return 'FINAL(answer)';
        return last.includes('[block 1]')
          ? `Counted.\n${final}`
          : repl('const answer = "entity";\nprint("least common:", answer)');
      });
      const r = await new RLM({ model, env: {} }).answer({ question, context: 'c' });
      return { r, model };
    };
    // A word of the question (an option, a label) is a literal answer.
    const option = await run('Which label is least common: entity or human?', 'FINAL(human)');
    expect(option.r).toMatchObject({ answer: 'human', status: 'final', iterations: 2 });
    // So is a word an output showed.
    expect((await run('Which one?', 'FINAL(common)')).r.answer).toBe('common');
    // A typo of a variable is not the answer: the model is told, with the variable it likely meant.
    const typo = await run('Which one?', 'FINAL(answr)');
    expect(typo.r).toMatchObject({ answer: 'entity', status: 'final', iterations: 3 });
    const told = lastUser(typo.model.requests[2]!);
    expect(told).toContain('FINAL(answr): there is no variable named `answr` in the session');
    expect(told).toContain('Did you mean `answer`?');
    expect(told).toContain('quote the text: FINAL("answr")');
  });

  it('refuses an answer over maxAnswerChars and lets the model shorten it', async () => {
    const events: TraceEvent[] = [];
    const model = new FnModel((req) =>
      lastUser(req).includes('answers are at most')
        ? repl('FINAL(big.length + " characters")')
        : repl('const big = "y".repeat(5000);\nFINAL(big)'),
    );
    const rlm = new RLM({ model, env: {}, maxAnswerChars: 1000, onEvent: (e) => events.push(e) });
    const r = await rlm.answer({ question: 'q', context: 'c' });
    expect(r).toMatchObject({ answer: '5000 characters', status: 'final', iterations: 2 });
    expect(lastUser(model.requests[1]!)).toContain('the answer is 5000 characters; answers are at most 1000');
    const out = events.find((e) => e.type === 'output');
    // The refused answer is not copied into the trace in full.
    expect(JSON.stringify(out).length).toBeLessThan(2000);
  });

  it('stores a long answer once in the trace (the final event), previews elsewhere', async () => {
    const events: TraceEvent[] = [];
    const model = new FnModel(() => repl('FINAL("z".repeat(3000))'));
    const r = await new RLM({ model, env: {}, onEvent: (e) => events.push(e) }).answer({ question: 'q' });
    expect(r.answer).toBe('z'.repeat(3000));
    const whole = events.map((e) => JSON.stringify(e)).join('\n');
    expect(whole.split('z'.repeat(3000)).length - 1).toBe(1);
    expect(events.find((e) => e.type === 'final')).toMatchObject({ answer: 'z'.repeat(3000) });
  });

  it('lists the documents of ingested paths in the prompt and in list_documents()', async () => {
    const dir = tempDir('rlm-docs-');
    mkdirSync(join(dir, 'notes'));
    writeFileSync(join(dir, 'notes', 'a.md'), 'Alpha notes about the harbour.\n');
    writeFileSync(join(dir, 'notes', 'b.md'), 'Beta notes.\n');
    const model = new FnModel((req) =>
      lastUser(req).includes('[block 1]')
        ? 'FINAL("done")'
        : repl(
            'print(JSON.stringify(list_documents().map((d) => [d.path, d.chunks])))\nprint(grep("harbour")[0].path)',
          ),
    );
    await new RLM({ model, env: {} }).answer({ question: 'q', paths: [join(dir, 'notes')] });
    const system = model.requests[0]?.system ?? '';
    expect(system).toContain('- notes/a.md (31 chars)\n- notes/b.md (12 chars)');
    expect(system).not.toContain(dir);
    const fed = lastUser(model.requests[1]!);
    // Listing the documents builds no index: their chunks are counted when search_chunks needs them.
    expect(fed).toContain('[["notes/a.md",null],["notes/b.md",null]]');
    expect(fed).toContain('\nnotes/a.md');
    expect(fed).not.toContain(dir);
  });

  it('tells the model a ```javascript fence did not run, and that a rejected block ran nothing', async () => {
    const model = new FnModel((req) => {
      const last = lastUser(req);
      if (last.includes('[turn 2')) return 'FINAL("done")';
      if (last.includes('[turn 1'))
        return repl('const seen = 1;\nObject.prototype.hasOwnProperty.call({}, "x")');
      return 'Counting first.\n```javascript\nprint(context.length)\n```';
    });
    await new RLM({ model, env: {} }).answer({ question: 'q', context: 'c' });
    expect(lastUser(model.requests[1]!)).toContain(
      'The ```javascript block at line 2 of your reply did not run: only ```repl blocks run.',
    );
    expect(lastUser(model.requests[1]!)).not.toContain('no ```repl block and no FINAL');
    const fed = lastUser(model.requests[2]!);
    expect(fed).toContain('write Object.hasOwn(o, k)');
    expect(fed).toContain('none of its code ran and none of its declarations exist');
  });
});
