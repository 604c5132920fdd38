import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { JsonlTraceFile, parseTrace, type TraceEvent, Tracer } from '../../src/runtime/trace.ts';
import { renderTraceFile, renderTraceTree } from '../../src/runtime/trace-render.ts';
import { thrown } from '../helpers/errors.ts';
import { tempDir } from '../helpers/temp.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

const dir = tempDir('rlm-trace-');

function twoLevelModel(): FnModel {
  return new FnModel((req) => {
    const last = lastUser(req);
    if (req.depth === 2) return 'leaf answer';
    if (req.depth === 1)
      return last.includes('[block') ? 'FINAL_VAR(x)' : repl('x = await llm_query("leaf q")');
    return last.includes('[block')
      ? 'FINAL(root answer)'
      : repl('print(await rlm_query("sub q", "sub ctx"))');
  });
}

describe('trace', () => {
  it('writes every event as JSONL and to onEvent, with depths and spans', async () => {
    const file = join(dir, 'run.jsonl');
    const seen: TraceEvent[] = [];
    const { rlm } = setup(twoLevelModel(), {
      trace: file,
      traceLevel: 'summary',
      onEvent: (e) => seen.push(e),
    });
    const result = await rlm.answer({ question: 'What?', context: 'root ctx' });
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const events = lines.map((l) => JSON.parse(l) as TraceEvent);
    expect(events).toEqual(seen);
    expect(events.map((e) => `${e.type}@${e.span}/${e.depth}`)).toEqual([
      'run_start@root/0',
      'model_call@root/0',
      'block@root/0',
      'subcall_start@root/0',
      'model_call@s1/1',
      'block@s1/1',
      'subcall_start@s1/1',
      'model_call@s2/2',
      'subcall_end@s1/1',
      'output@s1/1',
      'model_call@s1/1',
      'final@s1/1',
      'subcall_end@root/0',
      'output@root/0',
      'model_call@root/0',
      'final@root/0',
      'run_end@root/0',
    ]);
    expect(new Set(events.map((e) => e.run)).size).toBe(1);
    const calls = events.filter((e) => e.type === 'model_call');
    expect(calls.every((c) => c.usage.inputTokens > 0 && c.durationMs >= 0)).toBe(true);
    expect(calls.map((c) => c.kind)).toEqual(['turn', 'turn', 'leaf', 'turn', 'turn']);
    const starts = events.filter((e) => e.type === 'subcall_start');
    expect(starts.map((s) => [s.id, s.calleeDepth, s.kind, s.contextChars])).toEqual([
      ['s1', 1, 'rlm', 7],
      ['s2', 2, 'leaf', 0],
    ]);
    const end = events.at(-1);
    expect(end?.type === 'run_end' && end.result).toEqual(result);
    const out = events.find((e) => e.type === 'output' && e.span === 'root');
    expect(out?.type === 'output' && out.stdout).toBe('leaf answer');
  });

  it('appends runs to the same file and renders each as a tree', async () => {
    const file = join(dir, 'two.jsonl');
    const { rlm } = setup(twoLevelModel(), { trace: file });
    await rlm.answer({ question: 'First?', context: 'a' });
    await rlm.answer({ question: 'Second?', context: 'b' });
    const events = parseTrace(readFileSync(file, 'utf8'));
    expect(new Set(events.map((e) => e.run)).size).toBe(2);
    const text = await renderTraceFile(file);
    expect(text.match(/^run /gm)).toHaveLength(2);
    expect(text).toContain('Q: First?');
    expect(text).toMatch(/^ {6}sub s1 · depth 1 rlm · final · \d+ms · 7 chars: sub q$/m);
    expect(text).toMatch(/^ {12}sub s2 · depth 2 leaf · ok · \d+ms: leaf q$/m);
    expect(text).toContain('answer: root answer');
    expect(text).not.toContain('\x1b[');
  });

  it('renders a fixed trace readably (snapshot), with colour only when asked', () => {
    const base = { run: 'r1', t: 0 };
    const usage = { inputTokens: 1200, outputTokens: 80 };
    const events: TraceEvent[] = [
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'run_start',
        time: '2025-01-01T00:00:00.000Z',
        question: 'Which city hosts the summit?',
        model: 'anthropic:claude-sonnet-4-5',
        subModel: 'anthropic:claude-haiku-4-5',
        maxDepth: 2,
        maxIterations: 20,
        context: {
          kind: 'string',
          chars: 1_000_000,
          tokens: 250_000,
          documents: 1,
          chunks: 0,
          inIsolate: true,
        },
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'model_call',
        iteration: 1,
        kind: 'turn',
        model: 'm',
        usage,
        costUsd: 0.0048,
        durationMs: 1530,
        reply: '',
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'block',
        iteration: 1,
        index: 1,
        code: 'const hits = grep("summit")\nprint(hits.length)',
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'subcall_start',
        id: 's1',
        calleeDepth: 1,
        kind: 'rlm',
        prompt: 'Where is the summit held?',
        contextChars: 5000,
        cached: false,
      },
      {
        ...base,
        span: 's1',
        depth: 1,
        type: 'model_call',
        iteration: 1,
        kind: 'turn',
        model: 'm',
        usage,
        costUsd: 0,
        durationMs: 400,
        reply: '',
      },
      { ...base, span: 's1', depth: 1, type: 'final', source: 'text', answer: 'Geneva' },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'subcall_end',
        id: 's1',
        calleeDepth: 1,
        ok: true,
        answer: 'Geneva',
        cached: false,
        durationMs: 410,
        status: 'final',
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'subcall_start',
        id: 's2',
        calleeDepth: 1,
        kind: 'rlm',
        prompt: 'Where is the summit held?',
        contextChars: 5000,
        cached: true,
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'subcall_end',
        id: 's2',
        calleeDepth: 1,
        ok: true,
        answer: 'Geneva',
        cached: true,
        durationMs: 0,
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'output',
        iteration: 1,
        index: 1,
        ok: false,
        stdout: '',
        error: { code: 'RUNTIME', message: 'x is not defined' },
        final: null,
        reset: false,
        durationMs: 420,
      },
      {
        ...base,
        span: 'root',
        depth: 0,
        type: 'model_call',
        iteration: 2,
        kind: 'turn',
        model: 'm',
        usage,
        costUsd: 0.0048,
        durationMs: 65_000,
        reply: '',
      },
      { ...base, span: 'root', depth: 0, type: 'final', source: 'text', answer: 'Geneva' },
      {
        ...base,
        // The run itself took the whole call (no setup), so the header shows one time.
        t: 67_000,
        span: 'root',
        depth: 0,
        type: 'run_end',
        result: {
          answer: 'Geneva',
          status: 'final',
          iterations: 2,
          subCalls: 1,
          maxDepthReached: 1,
          usage: { inputTokens: 3600, outputTokens: 240, costUsd: 0.0096 },
          elapsedMs: 67_000,
        },
      },
    ];
    expect(renderTraceTree(events)).toMatchInlineSnapshot(`
      "run r1 · anthropic:claude-sonnet-4-5 · final · 2 turns · 1 sub-call · depth 1 · 1m07s · 3,600 in / 240 out · $0.0096
        Q: Which city hosts the summit?
        turn 1 · 1.5s · 1,200 in / 80 out · $0.0048
          block 1: const hits = grep("summit") print(hits.length)
            sub s1 · depth 1 rlm · final · 410ms · 5,000 chars: Where is the summit held?
              turn 1 · 400ms · 1,200 in / 80 out
              final (text): Geneva
              ⇐ Geneva
            sub s2 · depth 1 rlm · cached · 5,000 chars: Where is the summit held?
              ⇐ Geneva
            → RUNTIME 420ms x is not defined
        turn 2 · 1m05s · 1,200 in / 80 out · $0.0048
        final (text): Geneva
        answer: Geneva
      "
    `);
    const coloured = renderTraceTree(events, { color: true });
    expect(coloured).toContain('\x1b[32mfinal\x1b[0m');
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(renderTraceTree(events));
    const narrow = renderTraceTree(events, { width: 50 });
    expect(Math.max(...narrow.split('\n').map((l) => l.length))).toBeLessThanOrEqual(50);
  });

  it('skips a torn last line, and refuses a missing file or one that is not a trace', async () => {
    const file = join(dir, 'torn.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ run: 'x', t: 0, span: 'root', depth: 0, type: 'error', code: 'RUNTIME', message: 'm' })}\n{"run":"x","t"`,
    );
    expect(parseTrace(readFileSync(file, 'utf8'))).toHaveLength(1);
    const err = await renderTraceFile(join(dir, 'missing.jsonl')).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toContain('no trace file at');
    const notTrace = join(dir, 'notes.md');
    writeFileSync(notTrace, '# Notes\nnot json at all\n');
    const bad = await renderTraceFile(notTrace).catch((e: unknown) => e);
    expect(isRlmError(bad, 'BAD_INPUT')).toBe(true);
    expect((bad as Error).message).toContain('is not an rlm trace');
  });

  it('refuses a trace file whose folder does not exist, naming it, and makes no folder', () => {
    const root = tempDir();
    const made = new JsonlTraceFile(join(root, 't.jsonl'));
    made.close();
    expect(existsSync(join(root, 't.jsonl'))).toBe(true);
    const missing = join(root, 'a', 'b', 't.jsonl');
    const err = thrown(() => new JsonlTraceFile(missing));
    expect(err.code).toBe('BAD_INPUT');
    expect(err.message).toBe(
      `cannot open trace file ${missing}: its folder ${join(root, 'a')} does not exist`,
    );
    expect(existsSync(join(root, 'a'))).toBe(false);
    writeFileSync(join(root, 'file'), 'x');
    for (const file of [join(root, 'file', 't.jsonl'), join(root, 'file', 'deeper', 't.jsonl')]) {
      const e = thrown(() => new JsonlTraceFile(file));
      expect(e.code).toBe('BAD_INPUT');
      expect(e.message).toBe(`cannot open trace file ${file}: ${join(root, 'file')} is a file, not a folder`);
    }
  });

  it('a throwing listener does not break the run', async () => {
    const tracer = new Tracer('r', [], () => {
      throw new Error('listener bug');
    });
    expect(() => tracer.emit('root', 0, { type: 'error', code: 'X', message: 'y' })).not.toThrow();
    // A whole run (sub-calls included) whose onEvent throws on every event: its answer and its trace
    // file are those of a run without the listener.
    const file = join(dir, 'throwing-listener.jsonl');
    let calls = 0;
    const { rlm } = setup(twoLevelModel(), {
      trace: file,
      onEvent: () => {
        calls++;
        throw new Error('listener bug');
      },
    });
    const result = await rlm.answer({ question: 'What?', context: 'root ctx' });
    expect(result).toMatchObject({ status: 'final', answer: 'root answer' });
    const events = parseTrace(readFileSync(file, 'utf8'));
    expect(events.at(-1)?.type).toBe('run_end');
    expect(calls).toBe(events.length);
  });
});
