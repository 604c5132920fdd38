import { existsSync } from 'node:fs';
import path from 'node:path';
import { RlmError } from '../../errors.ts';
import type { Model } from '../../runtime/model.ts';
import { resolveOptions } from '../../runtime/options.ts';
import { createModel } from '../../runtime/providers/index.ts';
import type { RlmResult } from '../../runtime/result.ts';
import { RLM } from '../../runtime/rlm.ts';
import type { TraceEvent } from '../../runtime/trace.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_FAILURE, EXIT_OK, writeJson } from '../io.ts';
import { StatusLine } from '../status-line.ts';

const HELP = `usage: rlm answer QUESTION [--context PATH]... [--store DIR] [options]

Answers QUESTION over files (--context, repeatable; folders too) or a store (--store) with a recursive
language model: the model writes JavaScript that inspects the context and calls sub-models on pieces.
QUESTION '-' reads the question from stdin.

options:
  --context PATH       a file or folder to answer over (repeatable)
  --store DIR          a store built with \`rlm ingest\` (default: $RLM_STORE when no --context)
  --model SPEC         root model: anthropic:MODEL, openai:MODEL, claude-code[:MODEL], scripted:FILE
                       (default: $RLM_MODEL)
  --sub-model SPEC     model for sub-calls (default: $RLM_SUB_MODEL, else the root model)
  --max-depth N        recursion depth (default 2: root -> sub-RLM -> plain leaf)
  --max-iterations N   root turns before a forced final answer (default 20)
  --max-sub-calls N    sub-calls over the whole run (default 500)
  --max-cost USD       stop when the run has cost this much (default: no limit)
  --max-output-tokens N  output token cap per model reply, sent to every provider
                       (default: $RLM_MAX_OUTPUT_TOKENS, else the provider's)
  --trace FILE         append every event as JSON lines (see \`rlm trace show FILE\`)
  --json               print {answer, status, iterations, subCalls, maxDepthReached, usage, elapsedMs}

The answer goes to stdout; a live status line and a summary go to stderr.
Exit codes: 0 final answer, 1 the run ended otherwise (max_iterations, budget, aborted, error), 2 usage error.
`;

export default async function answer(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    context: { type: 'string', multiple: true },
    store: { type: 'string' },
    model: { type: 'string' },
    'sub-model': { type: 'string' },
    'max-depth': { type: 'string' },
    'max-iterations': { type: 'string' },
    'max-sub-calls': { type: 'string' },
    'max-cost': { type: 'string' },
    'max-output-tokens': { type: 'string' },
    trace: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 1)
    throw new RlmError('BAD_INPUT', 'answer: give the question as one argument (quote it)');
  let question = positionals[0] ?? '';
  if (question === '-') question = await readStdin(io);
  if (question.trim() === '')
    throw new RlmError('BAD_INPUT', 'answer: the question is empty (rlm answer "QUESTION" --context FILE)');

  // Everything that can be checked is checked before any work starts.
  const paths = (values.context ?? []).map((p) => path.resolve(io.cwd, p));
  for (const p of paths)
    if (!existsSync(p)) throw new RlmError('BAD_INPUT', `--context: no such file or directory: ${p}`);
  const storeDir = values.store ?? (paths.length === 0 ? io.env.RLM_STORE : undefined);
  if (paths.length > 0 && values.store)
    throw new RlmError('BAD_INPUT', 'answer: give --context or --store, not both');
  if (paths.length === 0 && !storeDir)
    throw new RlmError('BAD_INPUT', 'answer: nothing to answer over: give --context PATH or --store DIR');
  const spec = values.model ?? io.env.RLM_MODEL;
  if (!spec)
    throw new RlmError(
      'BAD_INPUT',
      'answer: no model: pass --model SPEC or set RLM_MODEL (e.g. anthropic:claude-sonnet-4-5)',
    );
  // The concurrency in force (RLM_SUB_CALL_CONCURRENCY) also bounds providers with their own limit.
  const concurrency = resolveOptions({ model: spec, env: io.env }).subCallConcurrency;
  const model: Model = createModel(spec, { env: io.env, concurrency });
  const subSpec = values['sub-model'] ?? io.env.RLM_SUB_MODEL;
  const subModel: Model = subSpec ? createModel(subSpec, { env: io.env, concurrency }) : model;
  const maxDepth = intFlag(values['max-depth'], 'max-depth', 0);
  const maxIterations = intFlag(values['max-iterations'], 'max-iterations', 1);
  const maxSubCalls = intFlag(values['max-sub-calls'], 'max-sub-calls', 0);
  const maxOutputTokens = intFlag(values['max-output-tokens'], 'max-output-tokens', 1);
  const maxCost = values['max-cost'] === undefined ? undefined : Number(values['max-cost']);
  if (maxCost !== undefined && !(maxCost > 0))
    throw new RlmError(
      'BAD_INPUT',
      `--max-cost must be a positive number of USD, got '${values['max-cost']}'`,
    );

  const status = new StatusLine(io.stderr);
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  let result: RlmResult;
  try {
    const rlm = new RLM({
      model,
      subModel,
      env: io.env,
      ...(maxDepth !== undefined ? { maxDepth } : {}),
      ...(maxIterations !== undefined ? { maxIterations } : {}),
      ...(maxSubCalls !== undefined ? { maxSubCalls } : {}),
      ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
      ...(maxCost !== undefined ? { maxCostUsd: maxCost } : {}),
      ...(values.trace ? { trace: path.resolve(io.cwd, values.trace) } : {}),
      onEvent: (e: TraceEvent) => status.event(e),
      signal: controller.signal,
    });
    result = await rlm.answer({
      question,
      ...(paths.length > 0 ? { paths } : { store: path.resolve(io.cwd, storeDir!) }),
    });
  } finally {
    status.done();
    process.off('SIGINT', onSignal);
  }
  if (values.json) {
    const { answer: a, status: s, iterations, subCalls, maxDepthReached, usage, elapsedMs, error } = result;
    writeJson(io, {
      answer: a,
      status: s,
      iterations,
      subCalls,
      maxDepthReached,
      usage,
      elapsedMs,
      ...(error ? { error } : {}),
    });
  } else {
    if (result.answer !== '')
      io.stdout.write(result.answer.endsWith('\n') ? result.answer : `${result.answer}\n`);
    const cost = result.usage.costUsd > 0 ? ` · $${result.usage.costUsd.toFixed(4)}` : '';
    io.stderr.write(
      `rlm: ${result.status} · ${result.iterations} iterations · ${result.subCalls} sub-calls · depth ${result.maxDepthReached} · ` +
        `${result.usage.inputTokens + result.usage.outputTokens} tokens${cost} · ${(result.elapsedMs / 1000).toFixed(1)} s\n`,
    );
    if (result.error) io.stderr.write(`rlm: ${result.error.message} [${result.error.code}]\n`);
  }
  return result.status === 'final' ? EXIT_OK : EXIT_FAILURE;
}

async function readStdin(io: CliIO): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) text += String(chunk);
  return text.trim();
}
