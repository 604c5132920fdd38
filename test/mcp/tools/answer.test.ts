import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { FileAccess } from '../../../src/mcp/access.ts';
import { RunWatch } from '../../../src/mcp/run-watch.ts';
import { createServer } from '../../../src/mcp/server.ts';
import type { ServerContext } from '../../../src/mcp/server-context.ts';
import { runAnswer } from '../../../src/mcp/tools/answer.ts';
import type { Model } from '../../../src/runtime/model.ts';
import { parseTrace } from '../../../src/runtime/trace.ts';
import { tempDir } from '../../helpers/temp.ts';
import { fakeSandboxes } from '../../runtime/helpers/fake-sandbox.ts';
import { type Connected, connect, textOf } from '../helpers/connect.ts';
import { repl, scripted } from '../helpers/rules.ts';

const dir = tempDir('rlm-mcp-answer-');

let open: Connected | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** A connection without file fences, for calling runAnswer directly. */
function fenceless(ctx: ServerContext) {
  return { access: new FileAccess(createServer(ctx), ctx.cwd, undefined) };
}

/** A server whose runs use the node:vm sandbox double, with `model` as RLM_MODEL. */
async function start(model: string, extra: Parameters<typeof connect>[0] = {}): Promise<Connected> {
  open = await connect({
    env: { RLM_MODEL: model },
    run: { sandboxFactory: fakeSandboxes().factory },
    allowScriptedModels: true,
    ...extra,
  });
  return open;
}

describe('rlm_answer', () => {
  it('answers with the `rlm answer --json` object as structured content', async () => {
    const model = scripted(dir, 'final.json', [{ depth: 0, reply: 'FINAL(42)' }]);
    const { call } = await start(model);
    const r = await call('rlm_answer', { question: 'What is the answer?', context: 'The answer is 42.' });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as Record<string, unknown>;
    expect(s).toMatchObject({
      answer: '42',
      status: 'final',
      iterations: 1,
      subCalls: 0,
      maxDepthReached: 0,
    });
    expect(Object.keys(s).sort()).toEqual(
      ['answer', 'elapsedMs', 'iterations', 'maxDepthReached', 'runId', 'status', 'subCalls', 'usage'].sort(),
    );
    expect(s.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(textOf(r)).toContain(`run ${s.runId as string}]`);
    expect((s.usage as { inputTokens: number }).inputTokens).toBeGreaterThan(0);
    expect(textOf(r)).toMatch(/^42\n\n\[rlm: status final, 1 iteration, 0 sub-calls/);
  });

  it('uses the model argument over RLM_MODEL, and max_iterations', async () => {
    const never = scripted(dir, 'never.json', [{ reply: 'FINAL(from env model)' }]);
    const chatty = scripted(dir, 'chatty.json', [
      { depth: 0, match: 'You have used all your turns', reply: 'FINAL(gave up)' },
      { depth: 0, reply: 'thinking...' },
    ]);
    const { call } = await start(never);
    const r = await call('rlm_answer', { question: 'q', context: 'c', model: chatty, max_iterations: 2 });
    expect(r.structuredContent).toMatchObject({ answer: 'gave up', status: 'max_iterations', iterations: 2 });
  });

  it('sends a progress notification per root iteration and per sub-call', async () => {
    const model = scripted(dir, 'sub.json', [
      {
        depth: 0,
        match: '^go$',
        reply: repl("globalThis.r = await llm_query('summarise part one'); FINAL(r)"),
      },
      { depth: 1, reply: 'part one is about cats' },
    ]);
    // No heartbeat within the test's lifetime: only the milestones are counted.
    const { client } = await start(model, { limits: { heartbeatMs: 3_600_000 } });
    const seen: Progress[] = [];
    const r = await client.callTool(
      { name: 'rlm_answer', arguments: { question: 'go', context: 'text', max_depth: 1 } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    expect(r.structuredContent).toMatchObject({
      answer: 'part one is about cats',
      status: 'final',
      subCalls: 1,
    });
    expect(seen.map((p) => p.message)).toEqual([
      'iteration 1 of 20: model replied',
      'sub-call 1 at depth 1: summarise part one',
    ]);
    expect(seen.map((p) => p.progress)).toEqual([1, 2]);
  });

  it('sends no progress when the caller sends no progress token', async () => {
    const model = scripted(dir, 'final2.json', [{ depth: 0, reply: 'FINAL("ok")' }]);
    const { client } = await start(model);
    const notes: unknown[] = [];
    client.fallbackNotificationHandler = async (n) => {
      notes.push(n);
    };
    const r = await client.callTool({ name: 'rlm_answer', arguments: { question: 'q', context: 'c' } });
    expect(r.structuredContent).toMatchObject({ answer: 'ok' });
    expect(notes.filter((n) => (n as { method: string }).method === 'notifications/progress')).toEqual([]);
  });

  it('sends run milestones as log notifications, at the level the client sets', async () => {
    const model = scripted(dir, 'logged.json', [{ depth: 0, reply: 'FINAL("ok")' }]);
    const { client } = await start(model);
    const logged: { level: string; logger?: string | undefined; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logged.push(n.params);
    });
    const r = await client.callTool({ name: 'rlm_answer', arguments: { question: 'q', context: 'c' } });
    const runId = (r.structuredContent as { runId: string }).runId;
    expect(logged.map((l) => [l.level, l.logger])).toEqual([
      ['info', 'rlm'],
      ['info', 'rlm'],
    ]);
    expect(logged[0]?.data).toBe(`run ${runId} started: model ${model}, 1 characters of context`);
    expect(logged[1]?.data).toMatch(
      new RegExp(`^run ${runId} final after 1 iteration, 0 sub-calls, \\$0\\.0000, \\d+ ms$`),
    );
    await client.setLoggingLevel('error');
    logged.length = 0;
    await client.callTool({ name: 'rlm_answer', arguments: { question: 'q', context: 'c' } });
    expect(logged).toEqual([]);
  });

  it('names the trace file and run id when a trace is kept', async () => {
    const trace = join(dir, 'named.jsonl');
    const model = scripted(dir, 'traced.json', [{ depth: 0, reply: 'FINAL("ok")' }]);
    const { call } = await start(model, { env: { RLM_MODEL: model, RLM_TRACE: trace } });
    const r = await call('rlm_answer', { question: 'q', context: 'c' });
    const s = r.structuredContent as { runId: string; trace: string };
    expect(s.trace).toBe(trace);
    const events = parseTrace(readFileSync(trace, 'utf8'));
    expect(events.every((e) => e.run === s.runId)).toBe(true);
  });

  it('cancellation stops the run and its sub-calls', async () => {
    const trace = join(dir, 'cancel.jsonl');
    const model = scripted(dir, 'slow.json', [
      {
        depth: 0,
        match: '^slow$',
        reply: repl("globalThis.r = await llm_query('take your time'); FINAL(r)"),
      },
      { depth: 1, reply: 'too late', delayMs: 120_000 },
    ]);
    const { client, ctx } = await start(model, { run: { sandboxFactory: fakeSandboxes().factory, trace } });
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'rlm_answer', arguments: { question: 'slow', context: 'c', max_depth: 1 } },
      undefined,
      {
        signal: controller.signal,
        onprogress: (p) => {
          if (p.message?.startsWith('sub-call')) controller.abort('user cancelled');
        },
      },
    );
    await expect(call).rejects.toThrow();
    // The handler settles only once the run has stopped: the sub-call would otherwise sleep two minutes.
    await ctx.idle();
    const events = parseTrace(readFileSync(trace, 'utf8'));
    const end = events.find((e) => e.type === 'run_end');
    expect(end?.type === 'run_end' && end.result.status).toBe('aborted');
    const sub = events.find((e) => e.type === 'subcall_end');
    expect(sub?.type === 'subcall_end' && sub.ok).toBe(false);
  });

  it('concurrent calls get separate sandboxes', async () => {
    const model = scripted(dir, 'state.json', [
      {
        depth: 0,
        match: '^(alpha|beta) question$',
        reply: repl("globalThis.secret ??= '$1'; print('secret=' + secret)"),
        delayMs: 50,
      },
      { depth: 0, match: 'secret=(\\w+)', reply: 'FINAL($1)' },
    ]);
    const sandboxes = fakeSandboxes();
    const { call } = await start(model, { run: { sandboxFactory: sandboxes.factory } });
    const [a, b] = await Promise.all([
      call('rlm_answer', { question: 'alpha question', context: 'c' }),
      call('rlm_answer', { question: 'beta question', context: 'c' }),
    ]);
    expect(a.structuredContent).toMatchObject({ answer: 'alpha', status: 'final' });
    expect(b.structuredContent).toMatchObject({ answer: 'beta', status: 'final' });
    expect(sandboxes.created).toHaveLength(2);
  });

  it('runs at most maxConcurrentRuns answers at once: the others wait their turn, and may be cancelled meanwhile', async () => {
    const model = scripted(dir, 'turns.json', [{ depth: 0, reply: 'FINAL(7)', delayMs: 300 }]);
    const { client, ctx } = await start(model, { limits: { maxConcurrentRuns: 1 } });
    const progress: string[] = [];
    const ask = (signal?: AbortSignal) =>
      client.callTool({ name: 'rlm_answer', arguments: { question: 'q', context: 'c' } }, undefined, {
        onprogress: (p) => progress.push(p.message ?? ''),
        ...(signal ? { signal } : {}),
      });
    const first = ask();
    const second = ask();
    const cancelled = new AbortController();
    const third = ask(cancelled.signal).catch((e: unknown) => e);
    await expect.poll(() => progress.some((m) => m.startsWith('waiting for a turn'))).toBe(true);
    expect(progress).toContain('waiting for a turn: this server runs 1 answer at once');
    cancelled.abort();
    expect(String(await third)).toMatch(/abort/i);
    const done = await Promise.all([first, second]);
    for (const r of done) expect(r.structuredContent).toMatchObject({ answer: '7', status: 'final' });
    // The cancelled call gave its place back: the permit is free again.
    await expect.poll(() => ctx.runs.available).toBe(1);
  });

  it('each result names its run, which is how it is found in a shared trace', async () => {
    const trace = join(dir, 'runs.jsonl');
    const model = scripted(dir, 'runs.json', [{ depth: 0, match: '^(\\w+)$', reply: 'FINAL($1!)' }]);
    const { call } = await start(model, { run: { sandboxFactory: fakeSandboxes().factory, trace } });
    const [a, b] = await Promise.all([
      call('rlm_answer', { question: 'one', context: 'c' }),
      call('rlm_answer', { question: 'two', context: 'c' }),
    ]);
    const ids = [a, b].map((r) => (r.structuredContent as { runId: string }).runId);
    expect(ids[0]).not.toBe(ids[1]);
    const starts = parseTrace(readFileSync(trace, 'utf8')).filter((e) => e.type === 'run_start');
    const question = (id: string) => starts.find((e) => e.run === id);
    expect(question(ids[0] as string)).toMatchObject({ question: 'one' });
    expect(question(ids[1] as string)).toMatchObject({ question: 'two' });
  });

  it('reads paths relative to the working directory', async () => {
    writeFileSync(join(dir, 'notes.txt'), 'The launch is on Tuesday.\n');
    const trace = join(dir, 'paths.jsonl');
    const model = scripted(dir, 'paths.json', [{ depth: 0, reply: 'FINAL("Tuesday")' }]);
    const { call } = await start(model, { cwd: dir, run: { trace } });
    const r = await call('rlm_answer', { question: 'When?', paths: ['notes.txt'] });
    expect(r.structuredContent).toMatchObject({ answer: 'Tuesday' });
    const startEvent = parseTrace(readFileSync(trace, 'utf8')).find((e) => e.type === 'run_start');
    expect(startEvent?.type === 'run_start' && startEvent.context).toMatchObject({ documents: 1, chars: 26 });
  });
});

describe('rlm_answer errors', () => {
  it('a missing provider key is a tool error, and the server keeps serving', async () => {
    const { call } = await start('anthropic:claude-sonnet-4-5');
    const r = await call('rlm_answer', { question: 'q', context: 'c' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      'rlm_answer: ANTHROPIC_API_KEY is not set (needed by anthropic:claude-sonnet-4-5) [BAD_INPUT]',
    );
    const ok = await call('rlm_answer', {
      question: 'q',
      context: 'c',
      model: scripted(dir, 'ok.json', [{ reply: 'FINAL("fine")' }]),
    });
    expect(ok.structuredContent).toMatchObject({ answer: 'fine' });
  });

  it("labels a run that ended without an answer: the model's last reply is not one", async () => {
    // One reply and no FINAL: the scripted model runs out and the run ends with an error.
    const lost = scripted(dir, 'lost.json', [
      { depth: 0, reply: "I'll look for the schema version line.", times: 1 },
    ]);
    const { call } = await start(lost);
    const r = await call('rlm_answer', { question: 'schema version?', context: 'nothing here' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(
      /^\[rlm: no answer: the run ended with status error; the model's last reply follows, and is not an answer\]\n\nI'll look/,
    );
  });

  it('no model anywhere is a tool error saying how to set one', async () => {
    open = await connect({ env: {} });
    const r = await open.call('rlm_answer', { question: 'q', context: 'c' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('RLM_MODEL');
  });

  it('bad arguments give an error naming the field', async () => {
    const { call } = await start(scripted(dir, 'unused.json', [{ reply: 'FINAL("x")' }]));
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ context: 'c' }, /at question/],
      [{ question: '   ' }, /question must not be empty at question/],
      [{ question: 'q', max_depth: 'two' }, /at max_depth/],
      [{ question: 'q', max_iterations: 0 }, /at max_iterations/],
      [{ question: 'q', paths: 'notes.txt' }, /at paths/],
      [{ question: 'q', context: 42 }, /at context/],
      [{ question: 'q', maxDepth: 1 }, /Unrecognized key: "maxDepth"/],
    ];
    for (const [args, message] of cases) {
      const r = await call('rlm_answer', args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(r)).toMatch(message);
    }
  });

  it('refuses paths and store together', async () => {
    const { call } = await start(scripted(dir, 'unused2.json', [{ reply: 'FINAL("x")' }]));
    const r = await call('rlm_answer', { question: 'q', paths: ['a'], store: 'b' });
    expect(textOf(r)).toBe('rlm_answer: give `paths` or `store`, not both [BAD_INPUT]');
  });

  it('refuses oversized inputs with a message', async () => {
    const { call } = await start(scripted(dir, 'unused3.json', [{ reply: 'FINAL("x")' }]), {
      limits: { maxContextChars: 1000, maxQuestionChars: 50, maxPaths: 2 },
    });
    const big = await call('rlm_answer', { question: 'q', context: 'x'.repeat(1001) });
    expect(textOf(big)).toMatch(/context is longer than the 1,000 characters limit at context/);
    const many = await call('rlm_answer', { question: 'q', context: ['x'.repeat(600), 'y'.repeat(600)] });
    expect(textOf(many)).toMatch(
      /context \(all documents together\) is longer than the 1,000 characters limit/,
    );
    const question = await call('rlm_answer', { question: 'q'.repeat(51), context: 'c' });
    expect(textOf(question)).toMatch(/question is longer than the 50 characters limit at question/);
    const paths = await call('rlm_answer', { question: 'q', paths: ['a', 'b', 'c'] });
    expect(textOf(paths)).toMatch(/paths has more than 2 entries at paths/);
    const fits = await call('rlm_answer', { question: 'q', context: 'x'.repeat(1000) });
    expect(fits.structuredContent).toMatchObject({ answer: 'x', status: 'final' });
  });

  it('a run that fails is a tool error that still carries the result', async () => {
    const { call } = await start(
      scripted(dir, 'exhausted.json', [{ depth: 0, match: 'nothing matches this', reply: 'x' }]),
    );
    const r = await call('rlm_answer', { question: 'q', context: 'c' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ status: 'error', error: { code: 'SCRIPT_EXHAUSTED' } });
    expect(textOf(r)).toContain('[SCRIPT_EXHAUSTED]');
  });

  it('refuses scripted model specs from the caller unless the server allows them', async () => {
    const model = scripted(dir, 'allowed.json', [{ depth: 0, reply: 'FINAL(from the default)' }]);
    const { call } = await start(model, { allowScriptedModels: false });
    // The operator's default may be scripted; a caller naming a file is not.
    const byDefault = await call('rlm_answer', { question: 'q', context: 'c' });
    expect(byDefault.structuredContent).toMatchObject({ answer: 'from the default' });
    for (const field of ['model', 'sub_model']) {
      const r = await call('rlm_answer', { question: 'q', context: 'c', [field]: 'scripted:/etc/passwd' });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe(
        `rlm_answer: ${field}: scripted models are disabled over MCP (they read a file the caller names); ` +
          'start the server with --allow-scripted to use them [BAD_INPUT]',
      );
    }
  });

  it('never echoes the content of a file named as a scripted model', async () => {
    const secret = join(dir, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:TOPSECRET-VALUE:/root:/bin/bash\n');
    const { call } = await start(scripted(dir, 'unused.json', [{ reply: 'FINAL("x")' }]));
    const r = await call('rlm_answer', { question: 'q', context: 'c', model: `scripted:${secret}` });
    expect(r.isError).toBe(true);
    const shown = JSON.stringify(r);
    expect(shown).toContain('is not valid JSON');
    expect(shown).not.toMatch(/TOPSECRET|root:x/);
  });

  it('sends a long answer once: whole in the structured content, cut in the text', async () => {
    const long = `${'a'.repeat(100)}${'b'.repeat(50)}`;
    const { call } = await start(scripted(dir, 'long.json', [{ depth: 0, reply: `FINAL("${long}")` }]), {
      limits: { maxTextAnswerChars: 100 },
    });
    const r = await call('rlm_answer', { question: 'q', context: 'c' });
    expect(r.structuredContent).toMatchObject({ answer: long, status: 'final' });
    expect(textOf(r)).toMatch(
      /^a{100}\n\n\[rlm: answer cut at 100 characters of 150 characters; the whole answer is in the structured content \(answer\)\]\n\n\[rlm: status final/,
    );
    // The cut answer is all there is of it (a random run id or trace path later on may hold any letters).
    expect(textOf(r).split('\n\n')[0]).toBe('a'.repeat(100));
  });

  it('keeps sending progress while it waits on a slow model call', async () => {
    // The model answers only once the client has heard a heartbeat: no timing decides the outcome.
    let release!: () => void;
    const heard = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gate: Model = {
      spec: 'gate',
      async complete() {
        await heard;
        return {
          text: 'FINAL("ok")',
          usage: { inputTokens: 1, outputTokens: 1 },
          model: 'gate',
          stopReason: 'end_turn',
        };
      },
    };
    const { client } = await start('gate', {
      run: { sandboxFactory: fakeSandboxes().factory, modelFactory: async () => gate },
      limits: { heartbeatMs: 20 },
    });
    const seen: string[] = [];
    const r = await client.callTool(
      { name: 'rlm_answer', arguments: { question: 'q', context: 'c' } },
      undefined,
      {
        onprogress: (p) => {
          seen.push(p.message ?? '');
          if (p.message?.startsWith('still waiting for the model (iteration 1 of 20)')) release();
        },
      },
    );
    expect(r.structuredContent).toMatchObject({ answer: 'ok' });
    expect(seen[0]).toMatch(/^still waiting for the model \(iteration 1 of 20\) \(\d+ s\)$/);
    expect(seen).toContain('iteration 1 of 20: model replied');
  });

  it('a call cancelled while its input loads makes no model call', async () => {
    let calls = 0;
    const counting: Model = {
      spec: 'count',
      async complete() {
        calls++;
        return {
          text: 'FINAL("x")',
          usage: { inputTokens: 1, outputTokens: 1 },
          model: 'count',
          stopReason: 'end_turn',
        };
      },
    };
    const s = await start('count', {
      run: { sandboxFactory: fakeSandboxes().factory, modelFactory: async () => counting },
    });
    writeFileSync(join(dir, 'input.txt'), 'some input');
    const controller = new AbortController();
    const watch = new RunWatch({ enabled: false, report: () => {} }, () => {}, 1000);
    // filesOf runs first; the signal fires while it does.
    const run = runAnswer(
      s.ctx,
      fenceless(s.ctx),
      { question: 'q', paths: [join(dir, 'input.txt')] },
      controller.signal,
      watch,
    );
    controller.abort();
    const err = await run.catch((e: unknown) => e);
    expect(isRlmError(err, 'ABORTED')).toBe(true);
    expect(calls).toBe(0);
  });
});
