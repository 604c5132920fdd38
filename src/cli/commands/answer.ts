import { existsSync } from 'node:fs';
import path from 'node:path';
import { readEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { describeLeftOut } from '../../prompts/build.ts';
import type { Model } from '../../runtime/model.ts';
import { checkLimit, type LimitName } from '../../runtime/option-schema.ts';
import { resolveOptions } from '../../runtime/options.ts';
import { createModel } from '../../runtime/providers/index.ts';
import { MODEL_SPECS } from '../../runtime/providers/specs.ts';
import type { RlmResult } from '../../runtime/result.ts';
import { RLM } from '../../runtime/rlm.ts';
import { TRACE_LEVELS, type TraceEvent, type TraceLevel } from '../../runtime/trace.ts';
import { answerResult, noAnswer } from '../../shapes.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, readStdin, shown, writeJson } from '../io.ts';
import { StatusLine } from '../status-line.ts';
import { storeDir as resolveStoreDir } from '../store-arg.ts';

const HELP = `usage: rlm answer QUESTION [--context PATH]... [--store DIR] [options]

Answers QUESTION over files (--context, repeatable; folders too) or a store (--store) with a recursive
language model: the model writes JavaScript that inspects the context and calls sub-models on pieces.
QUESTION '-' reads the question from stdin.

options:
  --context PATH       a file or folder to answer over (repeatable)
  --store DIR          a store built with \`rlm ingest\` (default: $RLM_STORE when no --context)
  --model SPEC         root model (default: $RLM_MODEL), one of:
                       ${MODEL_SPECS}
  --sub-model SPEC     model for sub-calls (default: $RLM_SUB_MODEL, else the root model)
  --max-depth N        recursion depth (default 2: root -> sub-RLM -> plain leaf)
  --max-iterations N   root turns before a forced final answer (default 20)
  --max-sub-calls N    sub-calls over the whole run (default 500)
  --max-cost USD       stop when the run has cost this much (default: no limit)
  --max-output-tokens N  output token cap per model reply, sent to every provider
                       (default: $RLM_MAX_OUTPUT_TOKENS, else the provider's)
  --trace FILE         append every event as JSON lines (see \`rlm trace show FILE\`, \`rlm trace html FILE\`);
                       FILE's folder must exist (default: $RLM_TRACE)
  --trace-level LEVEL  full (default: every model request, whole sub-call prompts and answers) or
                       summary (replies, blocks, outputs, previews: smaller files) (default: $RLM_TRACE_LEVEL)
  --json               print {answer, status, iterations, subCalls, maxDepthReached, usage, elapsedMs},
                       and runId and trace (its file) when the run is traced

The answer goes to stdout; a live status line and a summary go to stderr.
After an error, an abort or a spent budget, the model's last reply goes to stderr, not stdout.
Exit codes: 0 final answer, 1 the run ended otherwise (max_iterations, budget, aborted, error), 2 usage error,
130 interrupted (Ctrl-C).
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
    'trace-level': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 1)
    throw new RlmError('BAD_INPUT', 'answer: give the question as one argument (quote it)');
  let question = positionals[0] ?? '';
  if (question === '-') question = (await readStdin(io)).trim();
  if (question.trim() === '')
    throw new RlmError('BAD_INPUT', 'answer: the question is empty (rlm answer "QUESTION" --context FILE)');

  // Everything that can be checked is checked before any work starts.
  const paths = (values.context ?? []).map((p) => path.resolve(io.cwd, p));
  for (const p of paths)
    if (!existsSync(p)) throw new RlmError('BAD_INPUT', `--context: no such file or directory: ${p}`);
  const env = readEnv(io.env);
  const storeDir = values.store ?? (paths.length === 0 ? env.store : undefined);
  if (paths.length > 0 && values.store)
    throw new RlmError('BAD_INPUT', 'answer: give --context or --store, not both');
  if (paths.length === 0 && !storeDir)
    throw new RlmError('BAD_INPUT', 'answer: nothing to answer over: give --context PATH or --store DIR');
  const spec = values.model ?? env.model;
  if (!spec)
    throw new RlmError(
      'BAD_INPUT',
      'answer: no model: pass --model SPEC or set RLM_MODEL (e.g. anthropic:claude-sonnet-4-6)',
    );
  // The concurrency in force (RLM_SUB_CALL_CONCURRENCY) also bounds providers with their own limit.
  const concurrency = resolveOptions({ model: spec, env: io.env }).subCallConcurrency;
  const model: Model = createModel(spec, { env: io.env, concurrency });
  const subSpec = values['sub-model'] ?? env.subModel;
  const subModel: Model = subSpec ? createModel(subSpec, { env: io.env, concurrency }) : model;
  // Checked against the same schemas as the library's options and the MCP tool's arguments.
  const flag = (name: string, limit: LimitName) => {
    const value = values[name as 'max-depth'];
    return value === undefined ? undefined : checkLimit(limit, value, `--${name}`, 'BAD_INPUT');
  };
  const maxDepth = flag('max-depth', 'maxDepth');
  const maxIterations = flag('max-iterations', 'maxIterations');
  const maxSubCalls = flag('max-sub-calls', 'maxSubCalls');
  const maxCost = flag('max-cost', 'maxCostUsd');
  const maxOutputTokens = intFlag(values['max-output-tokens'], '--max-output-tokens', 1);

  const traceLevel = values['trace-level'];
  if (traceLevel !== undefined && !TRACE_LEVELS.includes(traceLevel as TraceLevel))
    throw new RlmError('BAD_INPUT', `--trace-level must be summary or full, got '${traceLevel}'`);

  const status = new StatusLine(io.stderr);
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    controller.abort();
  };
  process.once('SIGINT', onSignal);
  let result: RlmResult;
  let traceFile: string | undefined;
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
      ...(traceLevel === undefined ? {} : { traceLevel: traceLevel as TraceLevel }),
      onEvent: (e: TraceEvent) => {
        // What the folder's reading left out, which the model is told: the user is told too.
        if (e.type === 'run_start' && e.depth === 0 && e.context.leftOut)
          io.stderr.write(
            `rlm: note: left out of the context: ${shown(io.stderr, describeLeftOut(e.context.leftOut), true)}\n`,
          );
        status.event(e);
      },
      signal: controller.signal,
    });
    traceFile = rlm.options.trace === undefined ? undefined : path.resolve(io.cwd, rlm.options.trace);
    result = await rlm.answer({
      question,
      ...(paths.length > 0 ? { paths } : { store: resolveStoreDir(storeDir, io) }),
    });
  } finally {
    status.done();
    process.off('SIGINT', onSignal);
  }
  if (values.json) {
    // With a trace, the run's id finds it there (`rlm trace show FILE --run ID`).
    writeJson(io, {
      ...answerResult(result),
      ...(traceFile === undefined || result.runId === undefined
        ? {}
        : { runId: result.runId, trace: traceFile }),
    });
  } else {
    // After an error or an abort the "answer" is only the model's last prose: stdout is for answers, so
    // it goes to stderr, labelled, where a script piping stdout cannot mistake it for one.
    if (result.answer !== '' && !noAnswer(result.status)) {
      const answer = shown(io.stdout, result.answer);
      io.stdout.write(answer.endsWith('\n') ? answer : `${answer}\n`);
    } else if (result.answer !== '')
      io.stderr.write(
        `rlm: the model's last reply (not an answer):\n${shown(io.stderr, result.answer).replace(/\n?$/, '\n')}`,
      );
    const cost = result.usage.costUsd > 0 ? ` · $${result.usage.costUsd.toFixed(4)}` : '';
    io.stderr.write(
      `rlm: ${result.status} · ${plural(result.iterations, 'iteration')} · ${plural(result.subCalls, 'sub-call')} · depth ${result.maxDepthReached} · ` +
        `${plural(result.usage.inputTokens + result.usage.outputTokens, 'token')}${cost} · ${(result.elapsedMs / 1000).toFixed(1)} s\n`,
    );
    if (result.error)
      io.stderr.write(`rlm: ${shown(io.stderr, result.error.message, true)} [${result.error.code}]\n`);
  }
  if (interrupted) return EXIT_INTERRUPTED;
  return result.status === 'final' ? EXIT_OK : EXIT_FAILURE;
}
