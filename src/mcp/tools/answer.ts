/**
 * `rlm_answer`: one recursive long-context run per call. Every call builds its own RLM run, so concurrent
 * calls share no sandbox, model counters or budget; only open store handles are shared (read-only here).
 */
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { RlmError } from '../../errors.ts';
import type { AnswerInput } from '../../runtime/input.ts';
import type { RlmResult } from '../../runtime/result.ts';
import { RLM } from '../../runtime/rlm.ts';
import type { TraceEvent } from '../../runtime/trace.ts';
import type { ServerContext } from '../context.ts';
import { describeChars, type McpLimits } from '../limits.ts';
import { type Progress, progressFor } from '../progress.ts';
import { guard } from '../results.ts';

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
        .describe('The question to answer.'),
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
          'The context itself: one text, or a list of documents. It never enters your own context window.',
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
        .describe('Root model spec, e.g. anthropic:claude-sonnet-4-5. Default: RLM_MODEL.'),
      sub_model: z
        .string()
        .min(1)
        .optional()
        .describe('Model for sub-calls. Default: RLM_SUB_MODEL, else the root model.'),
      max_depth: z
        .number()
        .int()
        .min(0)
        .max(limits.maxDepth)
        .optional()
        .describe('Deepest recursion depth (default 2: root, sub-RLMs, plain leaf calls).'),
      max_iterations: z
        .number()
        .int()
        .min(1)
        .max(limits.maxIterations)
        .optional()
        .describe('Root turns before the model must answer (default 20).'),
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

/** The `rlm answer --json` object (DESIGN.md), plus the error of a run that did not finish. */
export const answerOutput = z.object({
  answer: z.string(),
  status: z.enum(['final', 'max_iterations', 'budget', 'aborted', 'error']),
  iterations: z.number().int(),
  subCalls: z.number().int(),
  maxDepthReached: z.number().int(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() }),
  elapsedMs: z.number(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

type AnswerArgs = z.output<ReturnType<typeof answerInput>>;

/** Registers `rlm_answer` on `server`. */
export function registerAnswer(server: McpServer, ctx: ServerContext): void {
  server.registerTool(
    'rlm_answer',
    {
      title: 'Answer over a long context (Recursive Language Model)',
      description:
        'Answers a question over a context too large for your window: text, files/folders, or an rlm store. ' +
        'A model explores the context by writing JavaScript in a sandbox and recursing into sub-calls; only ' +
        'the answer comes back. Sends progress per iteration and sub-call when asked; cancel to stop the run.',
      inputSchema: answerInput(ctx.limits),
      outputSchema: answerOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args, extra) =>
      guard('rlm_answer', ctx, async () => {
        const progress = progressFor(extra, (err) => ctx.log(`rlm serve: progress not sent: ${String(err)}`));
        const result = await runAnswer(ctx, args, extra.signal, progress);
        const shown = publicResult(result);
        const failed = result.status === 'error' || result.status === 'aborted';
        ctx.log(
          `rlm serve: rlm_answer ${result.status} after ${result.iterations} iterations, ${result.subCalls} sub-calls, ${result.elapsedMs} ms`,
        );
        return {
          content: [{ type: 'text', text: renderText(result) }],
          structuredContent: shown,
          ...(failed ? { isError: true } : {}),
        };
      }),
  );
}

/** Builds the run for one call and answers. Exported for tests of argument handling. */
export async function runAnswer(
  ctx: ServerContext,
  args: AnswerArgs,
  signal: AbortSignal,
  progress: Progress,
): Promise<RlmResult> {
  if (args.paths !== undefined && args.store !== undefined) {
    throw new RlmError('BAD_INPUT', 'give `paths` or `store`, not both');
  }
  const input: AnswerInput = { question: args.question, signal };
  if (args.context !== undefined) input.context = args.context;
  if (args.paths !== undefined) {
    input.paths = args.paths.map((p) => path.resolve(ctx.cwd, p));
  } else {
    const dir = args.store ?? (args.context === undefined ? ctx.defaults.store : undefined);
    if (dir !== undefined) input.store = await ctx.stores.get(dir);
  }
  const model = args.model ?? ctx.defaults.model;
  const subModel = args.sub_model ?? ctx.defaults.subModel;
  for (const spec of [args.model, args.sub_model]) {
    // A relay writes request files and waits up to an hour for hand-written replies: a local tool only.
    if (spec?.trim().startsWith('relay:')) {
      throw new RlmError(
        'BAD_INPUT',
        'relay: model specs are not available over MCP; use `rlm answer --model relay:DIR`',
      );
    }
  }
  const rlm = new RLM({
    ...ctx.run,
    env: ctx.env,
    ...(model === undefined ? {} : { model }),
    ...(subModel === undefined ? {} : { subModel }),
    ...(args.max_depth === undefined ? {} : { maxDepth: args.max_depth }),
    ...(args.max_iterations === undefined ? {} : { maxIterations: args.max_iterations }),
    ...(args.max_output_tokens === undefined ? {} : { maxOutputTokens: args.max_output_tokens }),
    ...(progress.enabled ? { onEvent: progressListener(progress) } : {}),
  });
  return rlm.answer(input);
}

/** Turns trace events into progress: one notification per root iteration and one per sub-call. */
function progressListener(progress: Progress): (e: TraceEvent) => void {
  let maxIterations = 0;
  let subCalls = 0;
  return (e) => {
    if (e.type === 'run_start') {
      maxIterations = e.maxIterations;
    } else if (e.type === 'model_call' && e.depth === 0) {
      progress.report(
        e.kind === 'last_call'
          ? 'out of iterations: asking for the final answer'
          : `iteration ${e.iteration} of ${maxIterations}: model replied`,
      );
    } else if (e.type === 'subcall_start') {
      subCalls++;
      const prompt = e.prompt.replace(/\s+/g, ' ').trim();
      const preview = prompt.length > 80 ? `${prompt.slice(0, 80)}…` : prompt;
      progress.report(
        `sub-call ${subCalls} at depth ${e.calleeDepth}${e.cached ? ' (cached)' : ''}: ${preview}`,
      );
    }
  };
}

/** The contract fields only: per-model usage and run ids are internal detail for this surface. */
function publicResult(r: RlmResult): Record<string, unknown> {
  return {
    answer: r.answer,
    status: r.status,
    iterations: r.iterations,
    subCalls: r.subCalls,
    maxDepthReached: r.maxDepthReached,
    usage: r.usage,
    elapsedMs: r.elapsedMs,
    ...(r.error === undefined ? {} : { error: r.error }),
  };
}

/** The answer first (what the calling model needs), then one line of facts. */
function renderText(r: RlmResult): string {
  const facts = [
    `status ${r.status}`,
    `${r.iterations} iteration${r.iterations === 1 ? '' : 's'}`,
    `${r.subCalls} sub-call${r.subCalls === 1 ? '' : 's'}`,
    `${r.usage.inputTokens + r.usage.outputTokens} tokens`,
    `$${r.usage.costUsd.toFixed(4)}`,
    `${(r.elapsedMs / 1000).toFixed(1)} s`,
  ];
  const err = r.error === undefined ? '' : `\n[${r.error.code}] ${r.error.message}`;
  return `${r.answer}\n\n[rlm: ${facts.join(', ')}]${err}`;
}
