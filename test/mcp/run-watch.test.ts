import { describe, expect, it } from 'vitest';
import type { Progress } from '../../src/mcp/progress.ts';
import { RunWatch } from '../../src/mcp/run-watch.ts';
import type { TraceEvent } from '../../src/runtime/trace.ts';

function watch(heartbeatMs = 3000) {
  const sent: string[] = [];
  const logs: string[] = [];
  const progress: Progress = { enabled: true, report: (m) => sent.push(m) };
  const clock = { now: 0 };
  const w = new RunWatch(
    progress,
    (level, data) => logs.push(`${level}: ${data}`),
    heartbeatMs,
    () => clock.now,
  );
  return { w, sent, logs, clock };
}

const base = { run: 'r1', t: 0, span: 'root', depth: 0 };
const start = {
  ...base,
  type: 'run_start',
  time: '',
  question: 'q',
  model: 'm',
  subModel: 'm',
  maxDepth: 2,
  maxIterations: 5,
  context: { kind: 'string', chars: 1200, tokens: 300, documents: 1, chunks: 0, inIsolate: true },
} as TraceEvent;

describe('RunWatch', () => {
  it('beats once per period of silence, saying what the run waits on and for how long', () => {
    const { w, sent, clock } = watch();
    w.phase('reading and indexing 3 files');
    clock.now = 2999;
    w.beat();
    expect(sent).toEqual([]);
    clock.now = 3000;
    w.beat();
    w.beat();
    expect(sent).toEqual(['still reading and indexing 3 files (3 s)']);
    w.onEvent(start);
    clock.now = 7000;
    w.beat();
    expect(sent.at(-1)).toBe('still waiting for the model (iteration 1 of 5) (4 s)');
  });

  it('tracks iterations, code and open sub-calls', () => {
    const { w, sent, clock } = watch();
    w.onEvent(start);
    w.onEvent({ ...base, type: 'model_call', iteration: 1, kind: 'turn' } as TraceEvent);
    expect(sent).toEqual(['iteration 1 of 5: model replied']);
    clock.now = 3000;
    w.beat();
    expect(sent.at(-1)).toBe('still running the code of iteration 1 (3 s)');
    const sub = { ...base, type: 'subcall_start', calleeDepth: 1, kind: 'leaf', cached: false };
    w.onEvent({ ...sub, id: 'a', prompt: 'summarise\n part  one' } as TraceEvent);
    w.onEvent({ ...sub, id: 'b', prompt: 'part two' } as TraceEvent);
    expect(sent.slice(-2)).toEqual([
      'sub-call 1 at depth 1: summarise part one',
      'sub-call 2 at depth 1: part two',
    ]);
    clock.now = 6000;
    w.beat();
    expect(sent.at(-1)).toBe('still waiting for 2 sub-calls (iteration 1) (3 s)');
    w.onEvent({ ...base, type: 'subcall_end', id: 'a' } as TraceEvent);
    clock.now = 9000;
    w.beat();
    expect(sent.at(-1)).toBe('still waiting for 1 sub-call (iteration 1) (3 s)');
    w.onEvent({ ...base, type: 'output', iteration: 1 } as TraceEvent);
    clock.now = 12000;
    w.beat();
    expect(sent.at(-1)).toBe('still waiting for the model (iteration 2 of 5) (3 s)');
  });

  it('logs the start and the end of a run', () => {
    const { w, logs } = watch();
    w.onEvent(start);
    w.onEvent({
      ...base,
      type: 'run_end',
      result: { status: 'error', iterations: 2, subCalls: 1, usage: { costUsd: 0.5 }, elapsedMs: 10 },
    } as TraceEvent);
    expect(logs).toEqual([
      'info: run r1 started: model m, 1,200 characters of context',
      'error: run r1 error after 2 iterations, 1 sub-call, $0.5000, 10 ms',
    ]);
  });

  it('sends nothing and starts no timer without a progress token', () => {
    const sent: string[] = [];
    const w = new RunWatch(
      { enabled: false, report: (m) => sent.push(m) },
      () => {},
      10,
      () => 1e9,
    );
    w.start();
    w.stop();
    expect(sent).toEqual([]);
  });
});
