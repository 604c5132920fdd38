/**
 * Memory tools: `rlm_remember`, `rlm_recall`, `rlm_forget`, `rlm_topics`. They give the calling assistant
 * a memory that outlives the conversation, kept in a store's chunk graph (memory/engine/memories.ts), so
 * `rlm_answer` and `rlm_search` over that store see the memories too. Shapes follow the CLI's `--json`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { MAX_TOPIC_CHARS, parseWhen } from '../../../memory/memories/memory-model.ts';
import { MEMORY_IMPORTANCE, type MemoryImportance } from '../../../memory/types.ts';
import { consolidateAfterRemember } from '../../runtime/consolidate.ts';
import { recallResults } from '../../shapes.ts';
import type { Connection } from '../connection.ts';
import { guard, structured } from '../results.ts';
import type { ServerContext } from '../server-context.ts';
import { checkedStoreDir, countArg, queryArg, storeArg, tagsArg } from './store-arg.ts';

// The store counts a topic's characters as code points (an emoji is one); a schema's bound counts UTF-16
// units, so it allows two per character and the store says exactly what is too long.
const topicArg = z
  .string()
  .min(1, 'topic must not be empty')
  .max(2 * MAX_TOPIC_CHARS);
const idsArg = z.array(z.string().min(1).max(200)).min(1, 'give at least one id').max(1000);
const when = z.string().min(1).max(40);

const rememberOutput = z.object({
  id: z.string(),
  topic: z.string(),
  importance: z.enum(MEMORY_IMPORTANCE as [MemoryImportance, ...MemoryImportance[]]),
  consolidated: z
    .object({
      summary: z.string().describe('The summary memory\u2019s id.'),
      text: z.string().describe('The summary\u2019s text.'),
      archived: z.array(z.string()),
    })
    .optional(),
  consolidationError: z
    .object({ code: z.string(), message: z.string() })
    .optional()
    .describe('Why automatic consolidation failed; the memory is stored all the same.'),
});

const recallOutput = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      score: z.number(),
      text: z.string(),
      topic: z.string(),
      importance: z.string(),
      weight: z.number(),
      created: z.string(),
      tags: z.array(z.string()),
      archived: z.boolean(),
    }),
  ),
});

const forgetOutput = z.object({
  forgotten: z.number().int(),
  ids: z.array(z.string()).describe('Memories deleted, summaries included.'),
  summaries: z
    .array(z.string())
    .describe('Consolidation summaries deleted because they were written from a deleted memory.'),
  restored: z.array(z.string()).describe('Other sources of those summaries, back from the archive.'),
});

const topicsOutput = z.object({
  topics: z.array(z.object({ topic: z.string(), memories: z.number().int(), archived: z.number().int() })),
});

/** Registers the memory tools on `server`. */
export function registerMemoryTools(server: McpServer, ctx: ServerContext, conn: Connection): void {
  // A store named by the caller is a path like any other: the server's file fence applies.
  const open = async (dir: string | undefined, create = false) =>
    ctx.stores.get(await checkedStoreDir(ctx, conn, dir), create ? { create: true } : {});

  server.registerTool(
    'rlm_remember',
    {
      title: 'Remember something across conversations',
      description:
        'Saves one memory that later conversations can recall: a decision and its reason, a preference the user ' +
        'stated, a fact about their project, a lesson from a mistake. Use it when the user says "remember", ' +
        'states a lasting preference, or a decision is settled; not for things only this conversation needs. ' +
        'Write one self-contained statement (who, what, why) and reuse an existing topic (see rlm_topics). ' +
        'importance: critical = must never fade (never archived), high, medium (default), low = fades fast.',
      inputSchema: z
        .object({
          text: z
            .string()
            .min(1, 'text must not be empty')
            .describe('The memory, as a full sentence or two.'),
          topic: topicArg.optional().describe('Short topic grouping related memories (default "general").'),
          importance: z
            .enum(MEMORY_IMPORTANCE as [MemoryImportance, ...MemoryImportance[]])
            .optional()
            .describe('How long it should matter (default medium).'),
          tags: tagsArg(200).optional().describe('Tags to filter by later.'),
          store: storeArg,
        })
        .strict(),
      outputSchema: rememberOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args, extra) =>
      guard('rlm_remember', ctx, async () => {
        const store = await open(args.store, true);
        const m = await store.remember({
          text: args.text,
          source: 'mcp',
          // A call cancelled while it waits for the store's lock (another process's ingest) stores nothing.
          signal: extra.signal,
          ...(args.topic !== undefined ? { topic: args.topic } : {}),
          ...(args.importance !== undefined ? { importance: args.importance } : {}),
          ...(args.tags !== undefined ? { tags: args.tags } : {}),
        });
        const after = await consolidateAfterRemember(store, m.topic, { env: ctx.env });
        return structured({ id: m.id, topic: m.topic, importance: m.importance, ...after });
      }),
  );

  server.registerTool(
    'rlm_recall',
    {
      title: 'Recall memories',
      description:
        'Finds memories saved with rlm_remember, ranked by relevance × weight × recency: by their words (stemmed, ' +
        'typos forgiven), and by meaning when the store has an embedder. Call it before ' +
        'answering about past decisions, the user\u2019s preferences or project facts, and at the start of a task ' +
        'on a topic you may have notes about. Recalling a memory strengthens it. Archived (faded or ' +
        'consolidated) memories are left out unless archived is true.',
      inputSchema: z
        .object({
          query: queryArg(ctx.limits, 'query').describe('What to look for.'),
          topic: topicArg.optional().describe('Only this topic.'),
          tags: tagsArg(200).optional().describe('Only memories with all of these tags.'),
          k: countArg(ctx.limits).describe('Number of results (default 10).'),
          since: when.optional().describe('Created at or after: ISO date, or Nd for N days ago.'),
          until: when.optional().describe('Created at or before: ISO date, or Nd for N days ago.'),
          archived: z.boolean().optional().describe('Include archived memories (default false).'),
          store: storeArg,
        })
        .strict(),
      outputSchema: recallOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      guard('rlm_recall', ctx, async () => {
        const store = await open(args.store);
        const hits = await store.recall(args.query, {
          ...(args.k !== undefined ? { k: args.k } : {}),
          ...(args.topic !== undefined ? { topic: args.topic } : {}),
          ...(args.tags !== undefined ? { tags: args.tags } : {}),
          ...(args.since !== undefined ? { since: parseWhen(args.since, 'since') } : {}),
          ...(args.until !== undefined ? { until: parseWhen(args.until, 'until') } : {}),
          ...(args.archived ? { archived: true } : {}),
        });
        return structured(recallResults(hits));
      }),
  );

  server.registerTool(
    'rlm_forget',
    {
      title: 'Delete memories',
      description:
        'Deletes memories for good, with their links. Only when the user asks to forget something, or a memory is ' +
        'wrong or holds a secret; an outdated memory is better corrected with a new rlm_remember. Ids come from ' +
        'rlm_recall. An unknown id fails the call and nothing is deleted. A summary made from a deleted ' +
        'memory is deleted too, and its other sources come back from the archive.',
      inputSchema: z.object({ ids: idsArg.describe('Memory ids (mem-…).'), store: storeArg }).strict(),
      outputSchema: forgetOutput,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guard('rlm_forget', ctx, async () => {
        const store = await open(args.store);
        const r = await store.deleteDocuments(args.ids, { memoriesOnly: true });
        const ids = [...r.deleted, ...r.summaries];
        return structured({ forgotten: ids.length, ids, summaries: r.summaries, restored: r.restored });
      }),
  );

  server.registerTool(
    'rlm_topics',
    {
      title: 'List memory topics',
      description:
        'Lists the topics of saved memories with how many are active and archived. Use it to see what is known ' +
        'before recalling, and to reuse an existing topic name when remembering.',
      inputSchema: z.object({ store: storeArg }).strict(),
      outputSchema: topicsOutput,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guard('rlm_topics', ctx, async () => {
        const store = await open(args.store);
        return structured({ topics: await store.topics() });
      }),
  );
}
