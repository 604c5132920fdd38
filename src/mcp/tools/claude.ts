/**
 * Claude Code history tools: `rlm_claude_recall`, `rlm_claude_timeline`, `rlm_claude_projects`. They read a
 * store filled by `rlm claude ingest` (or its hooks); shapes follow the CLI's `--json`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { type HistoryFilter, listProjects, recall, timeline } from '../../claude/catalog.ts';
import { roundScore } from '../../shapes.ts';
import type { Connection } from '../connection.ts';
import { guard, structured } from '../results.ts';
import type { ServerContext } from '../server-context.ts';
import { checkedStoreDir, countArg, queryArg, storeArg } from './store-arg.ts';

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

const when = z.union([z.string(), z.null()]);

export const claudeRecallOutput = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      score: z.number(),
      session: z.string(),
      project: z.string(),
      time: when,
      branch: when,
      model: when,
      agent: when,
      text: z.string(),
    }),
  ),
});

export const claudeTimelineOutput = z.object({
  sessions: z.array(
    z.object({
      session: z.string(),
      project: z.string(),
      title: z.string(),
      start: when,
      end: when,
      exchanges: z.number().int(),
      subagents: z.number().int(),
    }),
  ),
});

export const claudeProjectsOutput = z.object({
  projects: z.array(
    z.object({
      project: z.string(),
      sessions: z.number().int(),
      exchanges: z.number().int(),
      first: when,
      last: when,
    }),
  ),
});

const filterArgs = {
  project: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe('Only this project: its real path, or its last path segments (e.g. "my-app").'),
  since: z.string().min(1).max(64).optional().describe('ISO date or time; a bare date covers its whole day.'),
  until: z.string().min(1).max(64).optional().describe('ISO date or time; a bare date covers its whole day.'),
};

function filterOf(args: {
  project?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}): HistoryFilter {
  return {
    ...(args.project !== undefined ? { project: args.project } : {}),
    ...(args.since !== undefined ? { since: args.since } : {}),
    ...(args.until !== undefined ? { until: args.until } : {}),
  };
}

/** Registers the three Claude Code history tools on `server`. */
export function registerClaudeTools(server: McpServer, ctx: ServerContext, conn: Connection): void {
  server.registerTool(
    'rlm_claude_recall',
    {
      title: 'Recall past Claude Code sessions',
      description:
        "Searches the user's own past Claude Code conversations, across all their projects, and returns the best " +
        'exchanges (user message and reply) with session, project, time and text. Use it when the user refers to ' +
        'earlier work ("how did I fix…", "what did we decide about…", "last month we…") or when knowing how a ' +
        'problem was solved before would help; narrow with project, since and until.',
      inputSchema: z
        .object({
          query: queryArg(ctx.limits, 'query').describe('What to look for.'),
          store: storeArg,
          k: countArg(ctx.limits).describe('Number of exchanges (default 10).'),
          ...filterArgs,
        })
        .strict(),
      outputSchema: claudeRecallOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      guard('rlm_claude_recall', ctx, async () => {
        const store = await ctx.stores.get(await checkedStoreDir(ctx, conn, args.store));
        const found = await recall(store, args.query, { ...filterOf(args), k: args.k ?? 10 });
        const results = found.results.map((r) => ({ ...r, score: roundScore(r.score) }));
        const text =
          results.length === 0
            ? 'no matching exchanges'
            : results
                .map((r) => `── ${r.time ?? '?'} · ${r.project} · session ${r.session}\n${r.text}`)
                .join('\n\n');
        return structured({ results }, text);
      }),
  );

  server.registerTool(
    'rlm_claude_timeline',
    {
      title: 'Timeline of past Claude Code sessions',
      description:
        "Lists the user's past Claude Code sessions in time order with title, start, end and number of exchanges. " +
        'Use it to answer "what did I work on last week / in this project?" or to find a session before recalling ' +
        'details from it with rlm_claude_recall.',
      inputSchema: z.object({ store: storeArg, ...filterArgs }).strict(),
      outputSchema: claudeTimelineOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      guard('rlm_claude_timeline', ctx, async () => {
        const store = await ctx.stores.get(await checkedStoreDir(ctx, conn, args.store));
        return structured({ sessions: await timeline(store, filterOf(args)) });
      }),
  );

  server.registerTool(
    'rlm_claude_projects',
    {
      title: 'Projects in the Claude Code history',
      description:
        'Lists the projects with imported Claude Code sessions: real path, sessions, exchanges, first and last ' +
        'activity. Use it to learn which project names to pass to rlm_claude_recall or rlm_claude_timeline.',
      inputSchema: z.object({ store: storeArg }).strict(),
      outputSchema: claudeProjectsOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      guard('rlm_claude_projects', ctx, async () => {
        const store = await ctx.stores.get(await checkedStoreDir(ctx, conn, args.store));
        return structured({ projects: await listProjects(store) });
      }),
  );
}
