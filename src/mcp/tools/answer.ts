/**
 * `rlm_answer`: one recursive long-context run per call. Every call builds its own RLM run, so concurrent
 * calls share no sandbox, model counters or budget; only open store handles are shared (read-only here).
 */

import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { isRlmError, RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import type { AnswerInput } from '../../runtime/input.ts';
import { boundedLimit } from '../../runtime/limit-schemas.ts';
import { DEFAULTS } from '../../runtime/option-schema.ts';
import type { RlmResult } from '../../runtime/result.ts';
import { RLM } from '../../runtime/rlm.ts';
import { answerResult, noAnswer } from '../../shapes.ts';
import type { Connection } from '../connection.ts';
import { describeChars, type McpLimits } from '../limits.ts';
import { filesOf } from '../paths.ts';
import { progressFor } from '../progress.ts';
import { guard } from '../results.ts';
import { type LogSender, RunWatch } from '../run-watch.ts';
import type { ServerContext } from '../server-context.ts';
import { checkStoreAccess } from './store-arg.ts';

/** Input schema of `rlm_answer`; limits come from the server's configuration. */
export function answerInput(limits: McpLimits) {
  const tooLong = (what: string, max: number) => `${what} is longer than the ${describeChars(max)} limit`;
  return z
    .object({
      question: z
        .string()
        .trim()
        .min(1, 'question must not be empty')
        .max(limits.maxQuestionChars, tooLong('question', limits.maxQuestionChars))
        .describe(
          'The question, self-contained: the answering model sees only this and the context, not your conversation.',
        ),
      context: z
        .union([
          z.string().max(limits.maxContextChars, tooLong('context', limits.maxContextChars)),
          z
            .array(z.string())
            .min(1, 'context must not be an empty list')
            .max(limits.maxContextDocuments, `context has more than ${limits.maxContextDocuments} documents`)
            .refine(
              (docs) => docs.reduce((n, d) => n + d.length, 0) <= limits.maxContextChars,
              tooLong('context (all documents together)', limits.maxContextChars),
            ),
        ])
        .optional()
        .describe(
          'The context itself, for text you already hold: one text, or a list of documents. For files use `paths`.',
        ),
      paths: z
        .array(z.string().min(1, 'paths must not contain empty strings'))
        .min(1, 'paths must not be empty')
        .max(limits.maxPaths, `paths has more than ${limits.maxPaths} entries`)
        .optional()
        .describe(
          'Files or folders to read for this question (relative to the server\u2019s working directory).',
        ),
      store: z
        .string()
        .min(1)
        .optional()
        .describe(
          'A store folder built with rlm_ingest. Default: RLM_STORE when no context or paths are given.',
        ),
      model: z
        .string()
        .min(1)
        .optional()
        .describe('Root model spec, e.g. anthropic:claude-sonnet-4-6. Default: RLM_MODEL.'),
      sub_model: z
        .string()
        .min(1)
        .optional()
        .describe('Model for sub-calls. Default: RLM_SUB_MODEL, else the root model.'),
      // The library's own bounds (option-schema.ts, as zod in limit-schemas.ts), capped by the server's limits.
      max_depth: boundedLimit('maxDepth', limits.maxDepth)
        .optional()
        .describe(
          `Deepest recursion depth (default ${DEFAULTS.maxDepth}: root, sub-RLMs, plain leaf calls).`,
        ),
      max_iterations: boundedLimit('maxIterations', limits.maxIterations)
        .optional()
        .describe(`Root turns before the model must answer (default ${DEFAULTS.maxIterations}).`),
      max_output_tokens: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .optional()
        .describe(
          'Output token cap of every model reply, sent to the provider. Default: RLM_MAX_OUTPUT_TOKENS, else the provider default.',
        ),
    })
    .strict();
}

/** The `rlm answer --json` object (CONTRACTS.md), plus the error of a run that did not finish. */
const answerOutput = z.object({
  answer: z.string(),
  status: z.enum(['final', 'max_iterations', 'budget', 'aborted', 'error']),
  iterations: z.number().int(),
  subCalls: z.number().int(),
  maxDepthReached: z.number().int(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() }),
  elapsedMs: z.number(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  runId: z.string().optional().describe('Id of the run, as in its trace.'),
  trace: z.string().optional().describe('JSONL trace file the run was appended to (when RLM_TRACE is set).'),
});

type AnswerArgs = z.output<ReturnType<typeof answerInput>>;

/** Registers `rlm_answer` on `server`. */
export function registerAnswer(server: McpServer, ctx: ServerContext, conn: Connection): void {
  server.registerTool(
    'rlm_answer',
    {
      title: 'Answer over a long context (Recursive Language Model)',
      description:
        'Answers a question over a context too large for your window: text, files/folders, or an rlm store. ' +
        'A separate model explores the context by writing JavaScript in a sandbox and recursing into sub-calls; ' +
        'only the answer comes back. That model never sees this conversation: make the question self-contained ' +
        '(name the files, terms and what a good answer looks like). A call can take minutes and makes paid ' +
        'model calls (often dozens). Do not paste large text into `context`: pass file or folder `paths` ' +
        '(relative to the server\u2019s working folder, see rlm_status), or a `store` built once with rlm_ingest ' +
        'for material you will ask about again. Sends progress (with a heartbeat) when asked; cancel to stop.',
      inputSchema: answerInput(ctx.limits),
      outputSchema: answerOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args, extra) =>
      guard('rlm_answer', ctx, async () => {
        const progress = progressFor(extra, (err) => ctx.log(`rlm serve: progress not sent: ${String(err)}`));
        const log: LogSender = (level, data) => {
          server.server
            .sendLoggingMessage({ level, logger: 'rlm', data }, extra.sessionId)
            .catch((err: unknown) => ctx.log(`rlm serve: log notification not sent: ${String(err)}`));
        };
        const watch = new RunWatch(progress, log, ctx.limits.heartbeatMs);
        watch.start();
        let run: AnswerRun;
        try {
          run = await inTurn(ctx, extra.signal, watch, () => runAnswer(ctx, conn, args, extra.signal, watch));
        } catch (err) {
          if (isRlmError(err, 'ABORTED')) ctx.log('rlm serve: rlm_answer aborted before the run started');
          throw err;
        } finally {
          watch.stop();
        }
        const { result } = run;
        const failed = result.status === 'error' || result.status === 'aborted';
        ctx.log(
          `rlm serve: rlm_answer ${result.status} after ${plural(result.iterations, 'iteration')}, ${plural(result.subCalls, 'sub-call')}, ${result.elapsedMs} ms`,
        );
        return {
          content: [{ type: 'text', text: renderText(result, ctx.limits.maxTextAnswerChars) }],
          structuredContent: publicResult(run),
          ...(failed ? { isError: true } : {}),
        };
      }),
  );
}

/**
 * Runs `run` once the server gives it a turn ({@link McpLimits.maxConcurrentRuns}), saying so when it
 * must wait; the wait is cancelled with the call. A run waiting for its turn has read nothing yet.
 */
async function inTurn<T>(
  ctx: ServerContext,
  signal: AbortSignal,
  watch: RunWatch,
  run: () => Promise<T>,
): Promise<T> {
  if (ctx.runs.available === 0)
    watch.phase(
      `waiting for a turn: this server runs ${plural(ctx.limits.maxConcurrentRuns, 'answer')} at once`,
      true,
    );
  const release = await ctx.runs.acquire(signal);
  try {
    return await run();
  } finally {
    release();
  }
}

/** A finished run and where its trace went, if one is kept. */
export interface AnswerRun {
  result: RlmResult;
  /** Absolute path of the JSONL trace (RLM_TRACE or the server's `trace` option). */
  trace?: string;
}

/** Builds the run for one call and answers. Exported for tests of argument handling. */
export async function runAnswer(
  ctx: ServerContext,
  conn: Connection,
  args: AnswerArgs,
  signal: AbortSignal,
  watch: RunWatch,
): Promise<AnswerRun> {
  if (args.paths !== undefined && args.store !== undefined) {
    throw new RlmError('BAD_INPUT', 'give `paths` or `store`, not both');
  }
  callerModel(ctx, 'model', args.model);
  callerModel(ctx, 'sub_model', args.sub_model);
  // A scripted or replayed model the caller names reads its file: it is a read like any other, fenced.
  for (const spec of [args.model, args.sub_model]) {
    const file =
      spec === undefined ? undefined : /^\s*(?:scripted|replay)\s*:(.+)$/is.exec(spec)?.[1]?.trim();
    if (file) await conn.access.check(file, signal);
  }
  const input: AnswerInput = { question: args.question, signal };
  if (args.context !== undefined) input.context = args.context;
  if (args.paths !== undefined) {
    watch.phase(
      `looking through ${args.paths.length === 1 ? 'the path' : plural(args.paths.length, 'path')}`,
    );
    input.paths = (
      await filesOf(conn.access, args.paths, {
        maxBytes: ctx.limits.maxPathsBytes,
        tooLarge:
          'more than one call reads; ingest them once with rlm_ingest and pass `store`, or name fewer files',
        maxEntries: ctx.limits.maxPathsEntries,
        signal,
      })
    ).files;
    if (input.paths.length === 0) {
      throw new RlmError(
        'BAD_INPUT',
        `no files to read in ${args.paths.join(', ')} (dot-folders and node_modules are skipped)`,
      );
    }
    watch.phase(`reading ${input.paths.length} file${input.paths.length === 1 ? '' : 's'}`);
  } else {
    if (args.store !== undefined) await checkStoreAccess(ctx, conn, args.store, signal);
    const dir = args.store ?? (args.context === undefined ? ctx.defaults.store : undefined);
    if (dir !== undefined) {
      watch.phase(`opening the store ${dir}`);
      input.store = await ctx.stores.get(dir);
    }
  }
  // A cancel that arrived while the input loaded stops the run before any paid model call.
  if (signal.aborted) throw new RlmError('ABORTED', 'the call was cancelled');
  const model = args.model ?? ctx.defaults.model;
  const subModel = args.sub_model ?? ctx.defaults.subModel;
  const rlm = new RLM({
    ...ctx.run,
    env: ctx.env,
    ...(model === undefined ? {} : { model }),
    ...(subModel === undefined ? {} : { subModel }),
    ...(args.max_depth === undefined ? {} : { maxDepth: args.max_depth }),
    ...(args.max_iterations === undefined ? {} : { maxIterations: args.max_iterations }),
    ...(args.max_output_tokens === undefined ? {} : { maxOutputTokens: args.max_output_tokens }),
    onEvent: (e) => watch.onEvent(e),
  });
  const result = await rlm.answer(input);
  const trace = rlm.options.trace;
  return { result, ...(trace === undefined ? {} : { trace: path.resolve(ctx.cwd, trace) }) };
}

/**
 * Refuses, before any input is read, a model spec from the caller that waits on hand-written files
 * (`relay:DIR`, never over MCP) or makes the server read a file it names (`scripted:FILE`, `replay:TRACE`,
 * unless the server was started to allow it).
 */
function callerModel(ctx: ServerContext, field: string, spec: string | undefined): void {
  if (spec === undefined) return;
  // A relay writes request files and waits up to an hour for hand-written replies: a local tool only.
  if (/^\s*relay\s*:/i.test(spec)) {
    throw new RlmError(
      'BAD_INPUT',
      `${field}: relay: model specs are not available over MCP; use \`rlm answer --model relay:DIR\``,
    );
  }
  if (ctx.allowScriptedModels) return;
  const kind = /^\s*(scripted|replay)\s*:/i.exec(spec)?.[1]?.toLowerCase();
  if (kind !== undefined) {
    throw new RlmError(
      'BAD_INPUT',
      `${field}: ${kind} models are disabled over MCP (they read a file the caller names); ` +
        'start the server with --allow-scripted to use them',
    );
  }
}

/** The contract fields, plus the run id and the trace file that let a user look the run up. */
function publicResult({ result: r, trace }: AnswerRun): Record<string, unknown> {
  return {
    ...answerResult(r),
    ...(r.runId === undefined ? {} : { runId: r.runId }),
    ...(trace === undefined ? {} : { trace }),
  };
}

/**
 * The answer first (what the calling model needs), then one line of facts. An answer longer than
 * `maxAnswerChars` is cut there with a note: its whole text is in the structured content, once.
 */
function renderText(r: RlmResult, maxAnswerChars: number): string {
  const facts = [
    `status ${r.status}`,
    `${r.iterations} iteration${r.iterations === 1 ? '' : 's'}`,
    `${r.subCalls} sub-call${r.subCalls === 1 ? '' : 's'}`,
    plural(r.usage.inputTokens + r.usage.outputTokens, 'token'),
    `$${r.usage.costUsd.toFixed(4)}`,
    `${(r.elapsedMs / 1000).toFixed(1)} s`,
    ...(r.runId === undefined ? [] : [`run ${r.runId}`]),
  ];
  const err = r.error === undefined ? '' : `\n[${r.error.code}] ${r.error.message}`;
  const answer =
    r.answer.length <= maxAnswerChars
      ? r.answer
      : `${r.answer.slice(0, maxAnswerChars)}\n\n[rlm: answer cut at ${describeChars(maxAnswerChars)} of ` +
        `${describeChars(r.answer.length)}; the whole answer is in the structured content (answer)]`;
  // A run that did not finish has no answer, only the model's last prose: the caller must not take it
  // for one (the CLI prints it to stderr, labelled, for the same reason).
  if (noAnswer(r.status))
    return `[rlm: no answer: the run ended with status ${r.status}; the model's last reply follows, and is not an answer]\n\n${answer}\n\n[rlm: ${facts.join(', ')}]${err}`;
  return `${answer}\n\n[rlm: ${facts.join(', ')}]${err}`;
}
