/**
 * `rlm_status`: what the server would do with a call, without doing it: default models and whether their
 * providers are usable, the store's totals, and the limits in force. Problems are listed, not thrown, so a
 * client can show the whole picture in one call.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { type Env, type EnvValues, readEnv } from '../../../core/env.ts';
import { isRlmError } from '../../../core/errors.ts';
import { isPostgresUrl, redactUrl } from '../../../memory/postgres/url.ts';
import { resolveOptions } from '../../runtime/options.ts';
import type { Connection } from '../connection.ts';
import { guard, structured } from '../results.ts';
import type { ServerContext } from '../server-context.ts';
import { checkStoreAccess, storeArg } from './store-arg.ts';

const nullableNumber = z.number().nullable();

const statusOutput = z.object({
  server: z.object({ name: z.string(), version: z.string() }),
  workingFolder: z.string(),
  fileAccess: z.object({
    allowedFolders: z.array(z.string()).nullable(),
    roots: z.array(z.string()).nullable(),
  }),
  defaults: z.object({
    model: z.string().nullable(),
    subModel: z.string().nullable(),
    store: z.string().nullable(),
  }),
  providers: z.array(z.object({ name: z.string(), configured: z.boolean(), detail: z.string() })),
  store: z
    .object({
      dir: z.string(),
      documents: z.number().int(),
      chunks: z.number().int(),
      links: z.number().int(),
      tokens: z.number().int(),
      bytes: z.number().int(),
      memories: z.object({
        memories: z.number().int(),
        archived: z.number().int(),
        topics: z.number().int(),
        journaled: z.number().int(),
      }),
    })
    .nullable(),
  limits: z.object({
    run: z.object({
      maxDepth: z.number().int(),
      maxIterations: z.number().int(),
      maxSubIterations: z.number().int(),
      maxSubCalls: nullableNumber,
      maxTokens: nullableNumber,
      maxCostUsd: nullableNumber,
      maxWallMs: nullableNumber,
    }),
    input: z.object({
      maxQuestionChars: z.number().int(),
      maxContextChars: z.number().int(),
      maxContextDocuments: z.number().int(),
      maxPaths: z.number().int(),
      maxPathsBytes: z.number().int(),
    }),
  }),
  problems: z.array(z.string()),
});

/** Registers `rlm_status` on `server`. */
export function registerStatus(server: McpServer, ctx: ServerContext, conn: Connection): void {
  server.registerTool(
    'rlm_status',
    {
      title: 'rlm server status',
      description:
        'Shows the working folder that relative paths resolve against, which folders may be read, the default ' +
        'models and whether their providers are configured, the store\u2019s totals and the limits in force, with ' +
        'a list of configuration problems. Call it first when a tool reports a setup error.',
      inputSchema: z.object({ store: storeArg }).strict(),
      outputSchema: statusOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      guard('rlm_status', ctx, async () => {
        const problems: string[] = [];
        const d = ctx.defaults;
        if (d.model === undefined)
          problems.push('no default model: set RLM_MODEL or pass `model` to rlm_answer');
        for (const spec of new Set([d.model, d.subModel])) {
          if (spec !== undefined) {
            const why = await modelProblem(spec, ctx.env);
            if (why !== undefined) problems.push(`model ${spec}: ${why}`);
          }
        }
        const dir = args.store ?? d.store;
        let store: Record<string, unknown> | null = null;
        let roots: string[] | null = null;
        try {
          roots = (await conn.access.roots(extra.signal)) ?? null;
        } catch (err) {
          problems.push(isRlmError(err) ? err.message : String(err));
        }
        if (dir !== undefined) {
          try {
            if (args.store !== undefined) await checkStoreAccess(ctx, conn, args.store, extra.signal);
            const opened = await ctx.stores.get(dir);
            const s = await opened.stats();
            store = {
              memories: await opened.memoryTotals(),
              dir: ctx.stores.label(dir),
              documents: s.documents,
              chunks: s.chunks,
              links: s.links,
              tokens: s.tokens,
              bytes: s.bytes,
            };
          } catch (err) {
            problems.push(
              `store ${shownStore(dir)}: ${isRlmError(err) ? `${err.message} [${err.code}]` : String(err)}`,
            );
          }
        }
        return structured({
          server: { name: 'rlm', version: ctx.version },
          workingFolder: ctx.cwd,
          fileAccess: { allowedFolders: conn.access.allowedFolders ?? null, roots },
          defaults: {
            model: d.model ?? null,
            subModel: d.subModel ?? null,
            store: d.store === undefined ? null : shownStore(d.store),
          },
          providers: await providers(readEnv(ctx.env), ctx.allowScriptedModels),
          store,
          limits: { run: runLimits(ctx, problems), input: inputLimits(ctx) },
          problems,
        });
      }),
  );
}

/** Why `spec` cannot be used (bad spec, missing key), or undefined when a model can be built from it. */
async function modelProblem(spec: string, env: Env): Promise<string | undefined> {
  try {
    const { createModel } = await import('../../runtime/providers/index.ts');
    createModel(spec, { env });
    return undefined;
  } catch (err) {
    return isRlmError(err) ? err.message : String(err);
  }
}

async function providers(
  env: EnvValues,
  allowScripted: boolean,
): Promise<{ name: string; configured: boolean; detail: string }[]> {
  const { anthropic, openai } = env;
  const { findClaudeExecutable } = await import('../../runtime/providers/claude-code.ts');
  const claude = findClaudeExecutable(env);
  return [
    {
      name: 'anthropic',
      configured: anthropic.apiKey !== undefined,
      detail: anthropic.apiKey ? 'ANTHROPIC_API_KEY is set' : 'ANTHROPIC_API_KEY is not set',
    },
    {
      name: 'openai',
      configured: openai.apiKey !== undefined || openai.baseUrl !== undefined,
      detail: openai.baseUrl
        ? `endpoint ${openai.baseUrl}${openai.apiKey ? ' with OPENAI_API_KEY' : ''}`
        : openai.apiKey
          ? 'OPENAI_API_KEY is set'
          : 'neither OPENAI_API_KEY nor OPENAI_BASE_URL is set',
    },
    {
      name: 'claude-code',
      configured: Boolean(claude),
      detail: claude ? `claude CLI at ${claude}` : 'the claude CLI is not on PATH (or set CLAUDE_CODE_PATH)',
    },
    {
      name: 'scripted',
      configured: true,
      // The server's own default may be scripted; a call naming one is another matter (rlm serve --help).
      detail: allowScripted
        ? 'scripted:FILE rules for tests and demos; calls may name them (--allow-scripted)'
        : 'scripted:FILE rules for tests and demos, as the server default only: calls may name them when the server runs with --allow-scripted',
    },
  ];
}

function runLimits(ctx: ServerContext, problems: string[]): Record<string, number | null> {
  const finite = (n: number): number | null => (Number.isFinite(n) ? n : null);
  try {
    // The model only satisfies resolveOptions; the limits do not depend on it.
    const o = resolveOptions({ ...ctx.run, model: ctx.defaults.model ?? 'none' }, ctx.env);
    return {
      maxDepth: o.maxDepth,
      maxIterations: o.maxIterations,
      maxSubIterations: o.maxSubIterations,
      maxSubCalls: finite(o.maxSubCalls),
      maxTokens: finite(o.maxTokens),
      maxCostUsd: finite(o.maxCostUsd),
      maxWallMs: finite(o.maxWallMs),
    };
  } catch (err) {
    problems.push(isRlmError(err) ? err.message : String(err));
    return {
      maxDepth: 0,
      maxIterations: 0,
      maxSubIterations: 0,
      maxSubCalls: null,
      maxTokens: null,
      maxCostUsd: null,
      maxWallMs: null,
    };
  }
}

function inputLimits(ctx: ServerContext): Record<string, number> {
  const l = ctx.limits;
  return {
    maxQuestionChars: l.maxQuestionChars,
    maxContextChars: l.maxContextChars,
    maxContextDocuments: l.maxContextDocuments,
    maxPaths: l.maxPaths,
    maxPathsBytes: l.maxPathsBytes,
  };
}

/** A store's name as given, a URL's password hidden. */
function shownStore(name: string): string {
  return isPostgresUrl(name) ? redactUrl(name) : name;
}
