/**
 * `rlm bench [SUITE...]`: runs the long-context suites (benchmarks/) against rlm and its baselines with one
 * model, prints a summary (or the CONTRACTS.md object with --json) and writes report.json, report.md and
 * charts to --out. `--model smoke` is the built-in scripted policy: a fast offline run of the whole stack.
 */

import path from 'node:path';
import { parseDecimal } from '../core/decimal.ts';
import { readEnv } from '../core/env.ts';
import { RlmError } from '../core/errors.ts';
import { intFlag, parseCommandArgs } from '../src/cli/args.ts';
import { type CliIO, EXIT_FAILURE, EXIT_OK, writeJson } from '../src/cli/io.ts';
import { ProgressBar } from '../src/cli/progress.ts';
import type { ModelFactory, SandboxFactory } from '../src/runtime/options.ts';
import { MODEL_SPECS } from '../src/runtime/providers/specs.ts';
import { estimateCost } from './estimate.ts';
import { type BenchReport, runBench } from './harness.ts';
import { METHODS, type MethodName } from './methods.ts';
import { benchModelFactory, SMOKE_MODEL } from './policies/smoke.ts';
import { renderMarkdown, writeReport } from './report.ts';
import { parseSizes, pickNames, splitList } from './sizes.ts';
import { readTree } from './tasks/codeqa-tree.ts';
import { SUITES, type SuiteName } from './tasks/types.ts';

const HELP = `usage: rlm bench [SUITE...] [options]

Runs the long-context suites (${SUITES.join(', ')}; default all) with rlm and its baselines, all
with the same model, and writes report.json, report.md, score.svg and cost.svg to --out.

options:
  --model SPEC         model for every method (default $RLM_MODEL): 'smoke' (the built-in scripted
                       policy) or ${MODEL_SPECS}
  --methods LIST       ${METHODS.join(',')} (default all)
  --sizes LIST         context sizes in tokens, e.g. 8k,32k,128k,1m (k = 1024; default 8k,32k)
  --n N                tasks per suite and size (default 2)
  --seed N             generator seed (default 1)
  --out DIR            report folder (default ./benchmarks/out/<timestamp>)
  --max-cost USD       stop once this much is spent; the rest is marked skipped
  --max-iterations N   root turns of the rlm methods (default 20)
  --window N           tokens of context the direct baseline keeps (default 100000)
  -k N                 passages the bm25 baseline retrieves (default 8)
  --codeqa-root DIR    ask codeqa questions about this source tree instead of a synthetic one
  --json               print {suites, model, results, summary, ...}
`;

/** Seams for tests: where sandboxes and models come from. */
export interface BenchSeams {
  sandboxFactory?: SandboxFactory;
  modelFactory?: ModelFactory;
}

function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/:/g, '-');
}

function number(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = parseDecimal(value, true);
  if (!Number.isFinite(n) || n < 0)
    throw new RlmError('BAD_INPUT', `--${name} must be a non-negative number, got '${value}'`);
  return n;
}

/** `rlm bench` with injectable seams. */
export async function benchCommand(argv: string[], io: CliIO, seams: BenchSeams = {}): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    model: { type: 'string' },
    methods: { type: 'string' },
    sizes: { type: 'string' },
    n: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    'max-cost': { type: 'string' },
    'max-iterations': { type: 'string' },
    window: { type: 'string' },
    k: { type: 'string', short: 'k' },
    'codeqa-root': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  const suites: SuiteName[] =
    positionals.length === 0 ? [...SUITES] : pickNames(positionals, SUITES, 'suite');
  const methods: MethodName[] =
    values.methods === undefined ? [...METHODS] : pickNames(splitList(values.methods), METHODS, 'method');
  if (methods.length === 0) throw new RlmError('BAD_INPUT', '--methods is empty');
  const sizes = parseSizes(values.sizes ?? '8k,32k');
  if (sizes.length === 0) throw new RlmError('BAD_INPUT', '--sizes is empty');
  const n = intFlag(values.n, '--n', 1) ?? 2;
  const seed = intFlag(values.seed, '--seed', 0) ?? 1;
  const maxCostUsd = number(values['max-cost'], 'max-cost');
  const maxIterations = intFlag(values['max-iterations'], '--max-iterations', 1);
  const windowTokens = intFlag(values.window, '--window', 256);
  const bm25K = intFlag(values.k, '-k', 1);
  const model = values.model ?? readEnv(io.env).model;
  if (!model) {
    throw new RlmError(
      'BAD_INPUT',
      `no model: pass --model SPEC (or --model ${SMOKE_MODEL} for the offline scripted policy) or set RLM_MODEL`,
    );
  }
  const modelFactory = seams.modelFactory ?? benchModelFactory();
  // Fails now, before any work, on a bad spec or a missing API key.
  await modelFactory(model, io.env);
  const files =
    values['codeqa-root'] === undefined ? undefined : readTree(path.resolve(io.cwd, values['codeqa-root']));
  if (files !== undefined && files.length < 2)
    throw new RlmError(
      'BAD_INPUT',
      `--codeqa-root: fewer than two source files under ${values['codeqa-root']}`,
    );
  const out = path.resolve(io.cwd, values.out ?? path.join('benchmarks', 'out', stamp(new Date())));

  const plan = sizes.flatMap((size) =>
    suites.flatMap(() =>
      Array.from({ length: n * methods.length }, (_, i) => ({
        method: methods[i % methods.length] as MethodName,
        size,
      })),
    ),
  );
  const estimate = estimateCost(model, plan, {
    ...(windowTokens ? { windowTokens } : {}),
    ...(bm25K ? { bm25K } : {}),
  });
  // Scripted models (`smoke`, `scripted:FILE`) come back known and unpaid: no estimate, no warning.
  if (estimate.paid) {
    const guard = maxCostUsd === undefined ? 'no --max-cost guard' : `--max-cost $${maxCostUsd}`;
    io.stderr.write(
      `rlm bench: ${plan.length} runs; estimated cost ~$${estimate.usd.toFixed(2)} ` +
        `(${Math.round(estimate.inputTokens / 1000)}k input, ${Math.round(estimate.outputTokens / 1000)}k output tokens; ${guard})\n`,
    );
  } else if (!estimate.known) {
    io.stderr.write(`rlm bench: no price known for ${model}; costs will read $0\n`);
  }

  const bar = new ProgressBar(io.stderr);
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  let report: BenchReport;
  try {
    report = await runBench({
      suites,
      methods,
      sizes,
      n,
      seed,
      model,
      modelFactory,
      env: io.env,
      ...(seams.sandboxFactory ? { sandboxFactory: seams.sandboxFactory } : {}),
      ...(maxIterations !== undefined ? { rlmOptions: { maxIterations } } : {}),
      ...(windowTokens !== undefined ? { windowTokens } : {}),
      ...(bm25K !== undefined ? { bm25K } : {}),
      ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
      ...(files ? { generators: { codeqa: { files } } } : {}),
      signal: controller.signal,
      onProgress: (p) => bar.update(p.done, p.total, `${p.label}  $${p.spentUsd.toFixed(4)}`),
    });
  } finally {
    process.removeListener('SIGINT', onSignal);
    bar.done();
  }
  const written = writeReport(out, report);
  if (values.json) writeJson(io, report);
  else io.stdout.write(renderMarkdown(report).split('\n## Tasks')[0] ?? '');
  if (report.stopped === 'max_cost')
    io.stderr.write(
      `rlm bench: stopped at $${report.spentUsd} (--max-cost ${maxCostUsd}); remaining tasks skipped\n`,
    );
  // Last line, so the folder (by default benchmarks/out/<stamp> under the current directory) is easy to find.
  io.stderr.write(`rlm bench: report written to ${path.dirname(written.json)}\n`);
  return report.stopped === 'aborted' ? EXIT_FAILURE : EXIT_OK;
}

export default function bench(argv: string[], io: CliIO): Promise<number> {
  return benchCommand(argv, io);
}
