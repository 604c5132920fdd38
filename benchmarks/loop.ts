/**
 * RLM loop micro-benchmark: the runtime's own overhead per iteration and per sub-call with a zero-latency
 * model (targets: ≤ 5 ms and ≤ 10 ms), and batched sub-call throughput against sequential calls with a
 * model that sleeps 100 ms per call. The overhead figures use a stub sandbox so they measure the loop,
 * not isolate execution; when the isolated-vm session is present the per-iteration cost with it is
 * reported too. Run alone with `node --no-node-snapshot benchmarks/loop.ts`.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Model, ModelRequest, ModelResponse } from '../src/runtime/model.ts';
import type { SandboxFactory } from '../src/runtime/options.ts';
import { RLM } from '../src/runtime/rlm.ts';
import type { SandboxHost } from '../src/sandbox/host.ts';
import type { BlockResult, Sandbox } from '../src/sandbox/types.ts';

const ITERATIONS = 200;
const SUB_CALLS = 500;
const BATCH = 16;
const SLOW_MS = 100;
const HUGE_BATCH = 30_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (n: number) => Math.round(n * 1000) / 1000;

/** A model answering from a function, with constant usage so tokenising does not dominate. */
function model(reply: (req: ModelRequest) => string, delayMs = 0): Model {
  return {
    spec: 'bench:zero',
    async complete(req): Promise<ModelResponse> {
      if (delayMs > 0) await sleep(delayMs);
      return { text: reply(req), usage: { inputTokens: 100, outputTokens: 10 }, model: 'bench' };
    },
  };
}

/**
 * A sandbox that evaluates nothing: `CALL n` makes n sequential llm_query calls (`RCALL n`: rlm_query),
 * `BATCH n` one llm_query_batched of n distinct prompts, anything else prints "1".
 */
const stubSandbox: SandboxFactory = async (host: SandboxHost): Promise<Sandbox> => {
  let n = 0;
  return {
    async run(code, signal): Promise<BlockResult> {
      const sig = signal ?? new AbortController().signal;
      const [cmd, count] = code.trim().split(/\s+/);
      const k = Number(count ?? 0);
      if (cmd === 'CALL' || cmd === 'RCALL') {
        const kind = cmd === 'RCALL' ? 'rlm' : 'llm';
        for (let i = 0; i < k; i++) await host.llmQuery?.(`prompt ${n++}`, undefined, sig, { kind });
      }
      if (cmd === 'BATCH')
        await host.llmQueryBatched?.(
          Array.from({ length: k }, () => ({ prompt: `prompt ${n++}` })),
          sig,
        );
      return {
        ok: true,
        stdout: '1',
        final: null,
        error: null,
        stats: { cpuMs: 0, wallMs: 0, hostCalls: 0 },
        reset: false,
      };
    },
    async readVariable() {
      return undefined;
    },
    dispose() {},
  };
};

const block = (code: string) => `\`\`\`repl\n${code}\n\`\`\``;
const isFeedback = (req: ModelRequest) => (req.messages.at(-1)?.content ?? '').includes('[block 1]');

/** ms per root iteration for a run of `ITERATIONS` turns that each run one block. */
async function perIteration(sandboxFactory: SandboxFactory, code: string): Promise<number> {
  let turns = 0;
  const m = model(() => (++turns >= ITERATIONS ? 'FINAL(done)' : block(code)));
  const rlm = new RLM({ model: m, sandboxFactory, env: {}, maxIterations: ITERATIONS + 1 });
  const t = performance.now();
  const r = await rlm.answer({ question: 'bench', context: 'x'.repeat(10_000) });
  if (r.status !== 'final' || r.iterations !== ITERATIONS) throw new Error(`iteration run ended ${r.status}`);
  return (performance.now() - t) / ITERATIONS;
}

/**
 * ms per sub-call, measured as the extra time of a run making `SUB_CALLS` sequential calls. With the
 * stub sandbox the block is `CALL n`; with the isolate it is a real loop of llm_query calls.
 */
async function perSubCall(maxDepth: number, sandboxFactory: SandboxFactory = stubSandbox): Promise<number> {
  const isolate = sandboxFactory !== stubSandbox;
  const run = async (calls: number) => {
    const fn = maxDepth > 1 ? 'rlm_query' : 'llm_query';
    const code = isolate
      ? `for (let i = 0; i < ${calls}; i++) ${fn}('prompt ' + i)`
      : `${maxDepth > 1 ? 'RCALL' : 'CALL'} ${calls}`;
    const m = model((req) => {
      if (req.depth > 0) return maxDepth > 1 ? 'FINAL(sub)' : 'leaf';
      return isFeedback(req) ? 'FINAL(done)' : block(code);
    });
    const rlm = new RLM({ model: m, sandboxFactory, env: {}, maxDepth, maxSubCalls: SUB_CALLS + 1 });
    const t = performance.now();
    const r = await rlm.answer({ question: 'bench', context: 'ctx' });
    if (r.subCalls !== calls) throw new Error(`expected ${calls} sub-calls, got ${r.subCalls}`);
    return performance.now() - t;
  };
  await run(20); // warm-up
  const base = await run(0);
  return ((await run(SUB_CALLS)) - base) / SUB_CALLS;
}

/** Wall time of `BATCH` sub-calls to a slow model, batched (concurrency 8) or one at a time. */
async function slowCalls(batched: boolean): Promise<number> {
  const m = model(
    (req) =>
      req.depth > 0
        ? 'leaf'
        : isFeedback(req)
          ? 'FINAL(done)'
          : block(`${batched ? 'BATCH' : 'CALL'} ${BATCH}`),
    0,
  );
  const slow: Model = {
    spec: 'bench:slow',
    async complete(req) {
      if (req.depth > 0) await sleep(SLOW_MS);
      return m.complete(req);
    },
  };
  const rlm = new RLM({
    model: slow,
    sandboxFactory: stubSandbox,
    env: {},
    maxDepth: 1,
    subCallConcurrency: 8,
  });
  const t = performance.now();
  const r = await rlm.answer({ question: 'bench', context: 'ctx' });
  if (r.subCalls !== BATCH) throw new Error(`expected ${BATCH} sub-calls, got ${r.subCalls}`);
  return performance.now() - t;
}

/**
 * "Classify every line": one batch of `HUGE_BATCH` items to an instant model. Returns the wall time and
 * the longest the event loop went without a turn meanwhile (what a timer, an MCP ping or the block's
 * wall limit would have waited).
 */
export async function hugeBatch(): Promise<{ ms: number; maxLoopGapMs: number }> {
  const m = model((req) =>
    req.depth > 0 ? 'label' : isFeedback(req) ? 'FINAL(done)' : block(`BATCH ${HUGE_BATCH}`),
  );
  const rlm = new RLM({
    model: m,
    sandboxFactory: stubSandbox,
    env: {},
    maxDepth: 1,
    cache: false,
    maxSubCalls: Number.POSITIVE_INFINITY,
  });
  let last = performance.now();
  let maxGap = 0;
  let running = true;
  const tick = (): void => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t = performance.now();
  const r = await rlm.answer({ question: 'bench', context: 'ctx' });
  const ms = performance.now() - t;
  running = false;
  if (r.subCalls !== HUGE_BATCH) throw new Error(`expected ${HUGE_BATCH} sub-calls, got ${r.subCalls}`);
  return { ms, maxLoopGapMs: maxGap };
}

/** Runs the loop benchmarks; figures in ms unless named otherwise. */
export async function benchLoop(): Promise<Record<string, number>> {
  await perIteration(stubSandbox, 'print(1)'); // warm-up
  const result: Record<string, number> = {
    iterationOverheadMs: round(await perIteration(stubSandbox, 'print(1)')),
    subCallOverheadMs: round(await perSubCall(1)),
    subRlmCallOverheadMs: round(await perSubCall(2)),
  };
  const sequentialMs = await slowCalls(false);
  const batchedMs = await slowCalls(true);
  result.sequentialCallsPerSec = round(BATCH / (sequentialMs / 1000));
  result.batchedCallsPerSec = round(BATCH / (batchedMs / 1000));
  result.batchedSpeedup = round(sequentialMs / batchedMs);
  await hugeBatch(); // warm-up: the first batch also compiles the scheduling paths
  const huge = await hugeBatch();
  result.batch30kMs = Math.round(huge.ms);
  result.batch30kMaxLoopGapMs = round(huge.maxLoopGapMs);
  if (existsSync(new URL('../src/sandbox/session.ts', import.meta.url))) {
    const { defaultSandboxFactory } = await import('../src/runtime/rlm.ts');
    result.iterationWithIsolateMs = round(await perIteration(defaultSandboxFactory, 'print(1)'));
    result.subCallWithIsolateMs = round(await perSubCall(1, defaultSandboxFactory));
  }
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await benchLoop(), null, 2));
}
