import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { isRlmError, type RlmError } from '../../../core/errors.ts';
import type { ModelRequest } from '../../../src/runtime/model.ts';
import {
  buildInvocation,
  CLAUDE_NOT_FOUND,
  ClaudeCodeModel,
  parseResult,
  renderConversation,
} from '../../../src/runtime/providers/claude-code.ts';
import { createModel } from '../../../src/runtime/providers/index.ts';
import { gone } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/temp.ts';

const BIN = resolve(import.meta.dirname, '../../fixtures/providers/bin');
const FAKE = join(BIN, 'claude');
const tmp = tempDir('rlm-claude-code-');

const request: ModelRequest = {
  system: 'You are a sub-RLM.',
  messages: [{ role: 'user', content: 'What is 6*7?' }],
  depth: 1,
};

function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { ...process.env, ...extra };
}

async function rejection(p: Promise<unknown>): Promise<RlmError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isRlmError(err)) throw new Error(`expected an RlmError, got ${String(err)}`);
  return err;
}

describe('ClaudeCodeModel', () => {
  it('runs the CLI found on PATH and maps result, usage, cost and model', async () => {
    const model = new ClaudeCodeModel({
      model: 'sonnet',
      env: env({ PATH: `${BIN}${delimiter}${process.env.PATH ?? ''}` }),
    });
    const res = await model.complete(request);
    const echoed = JSON.parse(res.text) as { argv: string[]; stdin: string };
    expect(echoed.argv).toEqual([
      '-p',
      '--output-format',
      'json',
      '--tools',
      '',
      '--strict-mcp-config',
      '--no-session-persistence',
      '--model',
      'sonnet',
      '--system-prompt',
      'You are a sub-RLM.',
    ]);
    expect(echoed.stdin).toBe('What is 6*7?');
    expect(res.usage).toEqual({
      inputTokens: 11,
      outputTokens: 22,
      cacheWriteTokens: 33,
      cacheReadTokens: 44,
      costUsd: 0.0123,
    });
    expect(res.model).toBe('claude-sonnet-4-5-20250929');
    expect(model.spec).toBe('claude-code:sonnet');
  });

  it('sends maxOutputTokens to the CLI as CLAUDE_CODE_MAX_OUTPUT_TOKENS', async () => {
    const model = createModel('claude-code', { env: env({ CLAUDE_CODE_PATH: FAKE }) });
    const capped = JSON.parse((await model.complete({ ...request, maxOutputTokens: 321 })).text);
    expect(capped.maxOutputTokens).toBe('321');
    const free = JSON.parse((await model.complete(request)).text);
    expect(free).not.toHaveProperty('maxOutputTokens');
  });

  it('marks the CLI process as a model call, so that rlm hooks inside it stand aside', async () => {
    const model = createModel('claude-code', { env: env({ CLAUDE_CODE_PATH: FAKE }) });
    expect(JSON.parse((await model.complete(request)).text).modelCall).toBe('1');
  });

  it('is reachable through createModel and CLAUDE_CODE_PATH, without --model when none is given', async () => {
    const model = createModel('claude-code', { env: env({ CLAUDE_CODE_PATH: FAKE }) });
    const res = await model.complete({
      system: '',
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'reply' },
        { role: 'user', content: 'second' },
      ],
      depth: 0,
    });
    const echoed = JSON.parse(res.text) as { argv: string[]; stdin: string };
    expect(echoed.argv).not.toContain('--model');
    expect(echoed.argv).not.toContain('--system-prompt');
    expect(echoed.stdin).toContain(
      '<user>\nfirst\n</user>\n\n<assistant>\nreply\n</assistant>\n\n<user>\nsecond\n</user>',
    );
  });

  it('reports a non-zero exit as PROVIDER with the last stderr line', async () => {
    const model = new ClaudeCodeModel({ executable: FAKE, env: env({ FAKE_CLAUDE_MODE: 'fail' }) });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe(
      'claude-code: the claude CLI exited with 3: Error: Invalid API key · Please run /login',
    );
  });

  it('prefers the error in a JSON result over stderr', async () => {
    const model = new ClaudeCodeModel({ executable: FAKE, env: env({ FAKE_CLAUDE_MODE: 'error-result' }) });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toContain('Credit balance is too low');
  });

  it('kills the whole process group on timeout', async () => {
    const pidFile = join(tmp, 'grandchild.pid');
    // The clock is the test's: the timeout comes once the CLI has started its grandchild, however slow
    // the machine is to start them.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const model = new ClaudeCodeModel({
      executable: FAKE,
      timeoutMs: 1000,
      env: env({ FAKE_CLAUDE_MODE: 'hang', FAKE_CLAUDE_PIDFILE: pidFile }),
    });
    const pending = rejection(model.complete(request));
    while (!existsSync(pidFile)) await sleep(20);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(grandchild).toBeGreaterThan(0);
    vi.advanceTimersByTime(1000);
    const err = await pending;
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe('claude-code: the claude CLI timed out after 1000 ms');
    // SIGKILL delivery is asynchronous: it is gone once the kernel has delivered it.
    await gone(grandchild);
  });

  it('turns abort into ABORTED, and ends the CLI with everything it started', async () => {
    const pidFile = join(tmp, 'abort.pid');
    const model = new ClaudeCodeModel({
      executable: FAKE,
      env: env({ FAKE_CLAUDE_MODE: 'hang', FAKE_CLAUDE_PIDFILE: pidFile }),
    });
    const ctl = new AbortController();
    const pending = rejection(model.complete({ ...request, signal: ctl.signal }));
    // Aborted while the CLI runs (it has started its grandchild).
    while (!existsSync(pidFile)) await sleep(20);
    ctl.abort();
    expect((await pending).code).toBe('ABORTED');
    await gone(Number(readFileSync(pidFile, 'utf8')));
    expect((await rejection(model.complete({ ...request, signal: AbortSignal.abort() }))).code).toBe(
      'ABORTED',
    );
  });

  it('explains a missing executable', async () => {
    const model = new ClaudeCodeModel({ executable: join(tmp, 'no-such-claude') });
    const err = await rejection(model.complete(request));
    expect(err.code).toBe('PROVIDER');
    expect(err.message).toBe(CLAUDE_NOT_FOUND);

    const viaPath = new ClaudeCodeModel({ env: { PATH: tmp } });
    expect((await rejection(viaPath.complete(request))).message).toBe(CLAUDE_NOT_FOUND);
  });

  it('runs at most `concurrency` processes at once', async () => {
    const log = join(tmp, 'concurrency.log');
    const model = new ClaudeCodeModel({
      executable: FAKE,
      concurrency: 2,
      // Each run lasts until it has overlapped another, however slowly the machine starts processes.
      env: env({
        FAKE_CLAUDE_MODE: 'overlap',
        FAKE_CLAUDE_LOG: log,
        FAKE_CLAUDE_OVERLAP: '2',
        FAKE_CLAUDE_CALLS: '5',
      }),
    });
    await Promise.all([1, 2, 3, 4, 5].map(() => model.complete(request)));
    const events = readFileSync(log, 'utf8').trim().split('\n');
    let inFlight = 0;
    let peak = 0;
    for (const e of events) {
      inFlight += e === 'start' ? 1 : -1;
      peak = Math.max(peak, inFlight);
    }
    expect(events).toHaveLength(10);
    expect(peak).toBe(2);
  });
});

describe('claude-code helpers', () => {
  it('moves a system prompt too large for argv into stdin', () => {
    const big = 'x'.repeat(200_000);
    const { args, stdin } = buildInvocation({ system: big, messages: [{ role: 'user', content: 'hi' }] });
    expect(args).not.toContain('--system-prompt');
    expect(stdin.startsWith(`<system>\n${big}\n</system>\n\nhi`)).toBe(true);
  });

  it('passes a lone user message through unchanged', () => {
    expect(renderConversation([{ role: 'user', content: 'just this' }])).toBe('just this');
  });

  it('reads the result event from verbose array output', () => {
    const out = JSON.stringify([
      { type: 'system', subtype: 'init' },
      { type: 'result', is_error: false, result: 'ok', usage: { input_tokens: 1, output_tokens: 2 } },
    ]);
    expect(parseResult(out, 'opus')).toEqual({
      text: 'ok',
      model: 'opus',
      usage: { inputTokens: 1, outputTokens: 2 },
    });
  });

  it('rejects output that is not a result', () => {
    expect(() => parseResult('not json', undefined)).toThrow(/unexpected output/);
  });
});
