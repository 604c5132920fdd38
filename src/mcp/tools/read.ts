/**
 * The read-only store tools: `rlm_search`, `rlm_peek` and `rlm_grep`. They let a client look at a store
 * directly, for quick lookups that do not need a whole recursive run. Shapes follow the CLI's `--json`.
 */

import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { documentLinks, readTarget, searchDocumentIds, unknownId } from '../../../memory/read.ts';
import { CHUNK_TYPES, type ChunkType, type GrepOptions, type SearchOptions } from '../../../memory/types.ts';
import { chunkPath, documentPeekResult, lookupFor, peekResult, searchResults } from '../../shapes.ts';
import type { Connection } from '../connection.ts';
import { grepView } from '../grep-view.ts';
import { guard, structured } from '../results.ts';
import type { ServerContext } from '../server-context.ts';
import { checkedStoreDir, countArg, queryArg, storeArg, tagsArg } from './store-arg.ts';

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

const chunkId = z.string().min(1, 'id must not be empty').max(1000);

/** Characters of grep output by default, and of one matching line. */
const DEFAULT_GREP_CHARS = 20_000;
const GREP_LINE_CHARS = 500;

const documentsArg = z
  .array(z.string().min(1))
  .max(1000)
  .optional()
  .describe(
    'Only chunks of these documents: document ids, or the paths they were ingested from. An unknown one is an error.',
  );

const searchOutput = z.object({
  results: z.array(
    z.object({
      id: z.string(),
      score: z.number(),
      preview: z.string(),
      document: z.string(),
      path: z.string().nullable(),
      tags: z.array(z.string()),
    }),
  ),
});

const peekChunk = z.object({
  id: z.string(),
  text: z.string(),
  tokens: z.number().int(),
  document: z.string(),
  path: z.string().nullable(),
  tags: z.array(z.string()),
  links: z.array(z.object({ from: z.string(), to: z.string(), type: z.string(), strength: z.number() })),
  range: z
    .object({ start: z.number().int(), end: z.number().int(), chars: z.number().int() })
    .optional()
    .describe('With start/end: the slice of the text returned, and the whole text\u2019s length.'),
});

/** One chunk (the `rlm peek --json` object); with several ids, the others follow in `more`. */
const peekOutput = peekChunk.extend({
  more: z.array(peekChunk).optional().describe('The chunks of the other requested ids, in order.'),
});

const grepOutput = z.object({
  matches: z.array(
    z.object({
      id: z.string(),
      offset: z.number().int(),
      text: z.string(),
      path: z.string().nullable(),
      before: z.string().optional(),
      after: z.string().optional(),
    }),
  ),
  truncated: z.boolean(),
});

/** Registers `rlm_search`, `rlm_peek` and `rlm_grep` on `server`. */
export function registerReadTools(server: McpServer, ctx: ServerContext, conn: Connection): void {
  const limits = ctx.limits;

  server.registerTool(
    'rlm_search',
    {
      title: 'Search an rlm store',
      description:
        'Ranked search over a store\u2019s chunks (BM25 with stemming and typo tolerance; hybrid with vectors ' +
        'when the store has an embedder). Returns chunk ids to read with rlm_peek.',
      inputSchema: z
        .object({
          query: queryArg(limits, 'query').describe('Words to search for.'),
          store: storeArg,
          k: countArg(limits).describe('Number of results (default 10).'),
          document: documentsArg,
          tags: tagsArg().optional().describe('Only chunks with all of these tags.'),
          type: z
            .enum(CHUNK_TYPES as [ChunkType, ...ChunkType[]])
            .optional()
            .describe('Only chunks of this type.'),
          mode: z
            .enum(['bm25', 'vector', 'hybrid'])
            .optional()
            .describe('Ranking (default: hybrid when possible).'),
        })
        .strict(),
      outputSchema: searchOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      guard('rlm_search', ctx, async () => {
        const store = await ctx.stores.get(await checkedStoreDir(ctx, conn, args.store));
        const opts: SearchOptions = { k: args.k ?? 10 };
        if (args.document !== undefined) {
          opts.document = await searchDocumentIds(store, args.document, (d) => path.resolve(ctx.cwd, d));
        }
        if (args.tags !== undefined) opts.tags = args.tags;
        if (args.type !== undefined) opts.type = args.type;
        if (args.mode !== undefined) opts.mode = args.mode;
        const hits = await store.search(args.query, opts);
        return structured(searchResults(hits));
      }),
  );

  server.registerTool(
    'rlm_peek',
    {
      title: 'Read chunks of an rlm store',
      description:
        'Returns a chunk\u2019s text with its document, tags and links (ids come from rlm_search or rlm_grep). ' +
        'A document id or a memory id (mem-\u2026) returns the whole document, with the links that leave it. ' +
        'Pass several ids to read them in one call, and start/end to read only a character range of each. ' +
        'Reading through this tool records no access statistics: it changes nothing.',
      inputSchema: z
        .object({
          id: z
            .union([
              chunkId,
              z
                .array(chunkId)
                .min(1, 'id must not be an empty list')
                .max(limits.maxPeekIds, `id has more than ${limits.maxPeekIds} entries`),
            ])
            .describe(
              'Chunk id (DOCUMENT:ORDINAL), document id or memory id (mem-\u2026), or a list of them.',
            ),
          start: z.number().int().min(0).optional().describe('First character of the text to return.'),
          end: z.number().int().min(0).optional().describe('Character after the last one to return.'),
          store: storeArg,
        })
        .strict(),
      outputSchema: peekOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      guard('rlm_peek', ctx, async () => {
        const store = await ctx.stores.get(await checkedStoreDir(ctx, conn, args.store));
        const ids = typeof args.id === 'string' ? [args.id] : args.id;
        const ranged = args.start !== undefined || args.end !== undefined;
        const views = await Promise.all(
          ids.map(async (id) => {
            const target = await readTarget(store, id, {
              ...(args.start === undefined ? {} : { start: args.start }),
              ...(args.end === undefined ? {} : { end: args.end }),
            });
            if (target === undefined) throw unknownId(id, 'rlm_search and rlm_grep give chunk ids');
            // No store.touch: the tool is annotated read-only, and access statistics are a write.
            if (target.kind === 'document') {
              const { read } = target;
              const whole = documentPeekResult(read, await documentLinks(store, read.documents));
              return ranged
                ? { ...whole, range: { start: read.start, end: read.end, chars: read.length } }
                : whole;
            }
            const { chunk } = target;
            const whole = peekResult(
              chunk,
              await store.neighbors(chunk.id),
              await lookupFor(store, [chunk.id]),
            );
            if (!ranged) return whole;
            const start = Math.min(args.start ?? 0, chunk.text.length);
            const end = Math.max(start, Math.min(args.end ?? chunk.text.length, chunk.text.length));
            return {
              ...whole,
              text: chunk.text.slice(start, end),
              range: { start, end, chars: chunk.text.length },
            };
          }),
        );
        const [first, ...rest] = views as [(typeof views)[number], ...typeof views];
        const value = rest.length === 0 ? first : { ...first, more: rest };
        // The chunk text itself is what a reader wants in `content`; the metadata stays structured.
        const text =
          views.length === 1 ? first.text : views.map((v) => `--- ${v.id}\n${v.text}`).join('\n\n');
        return structured(value, text);
      }),
  );

  server.registerTool(
    'rlm_grep',
    {
      title: 'Regex search over an rlm store',
      description:
        'Finds a JavaScript regex (or a literal string) in every chunk; returns the matching lines with chunk ids, ' +
        'optionally with context lines. The result is bounded in characters (long lines are cut around the ' +
        'match; `truncated` says when matches were left out). A pattern that runs too long is stopped with a ' +
        'TIMEOUT error.',
      inputSchema: z
        .object({
          pattern: queryArg(limits, 'pattern').describe(
            'JavaScript regex source, or a literal with literal=true.',
          ),
          store: storeArg,
          literal: z.boolean().optional().describe('Match the pattern as plain text.'),
          ignore_case: z.boolean().optional(),
          limit: countArg(limits).describe('Most matches (default 100).'),
          document: documentsArg,
          context_lines: z
            .number()
            .int()
            .min(0)
            .max(20)
            .optional()
            .describe('Lines of context before and after each matching line (default 0).'),
          max_chars: z
            .number()
            .int()
            .min(100)
            .max(limits.maxGrepChars)
            .optional()
            .describe(
              `Characters of all returned text together (default ${DEFAULT_GREP_CHARS}); long lines are cut around the match.`,
            ),
        })
        .strict(),
      outputSchema: grepOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      guard('rlm_grep', ctx, async () => {
        const store = await ctx.stores.get(await checkedStoreDir(ctx, conn, args.store));
        const opts: GrepOptions = { limit: args.limit ?? 100 };
        if (args.literal !== undefined) opts.literal = args.literal;
        if (args.ignore_case !== undefined) opts.ignoreCase = args.ignore_case;
        // A relative path is the server's folder's, as rlm_search has it; an id stays as it is.
        if (args.document !== undefined)
          opts.document = await Promise.all(
            args.document.map(async (d) => ((await store.findDocument(d)) ? d : path.resolve(ctx.cwd, d))),
          );
        const result = await store.grep(args.pattern, opts);
        // Context lines come from the chunks' texts: read each matched chunk once, only when asked for.
        const texts = new Map<string, string | undefined>();
        if ((args.context_lines ?? 0) > 0)
          for (const m of result.matches)
            if (!texts.has(m.id)) texts.set(m.id, (await store.getChunk(m.id))?.text);
        const view = grepView(result.matches, (id) => texts.get(id), {
          maxChars: Math.min(args.max_chars ?? DEFAULT_GREP_CHARS, limits.maxGrepChars),
          maxLineChars: GREP_LINE_CHARS,
          contextLines: args.context_lines ?? 0,
        });
        const lookup = await lookupFor(
          store,
          view.matches.map((m) => m.id),
        );
        return structured({
          matches: view.matches.map((m) => ({ ...m, path: chunkPath(m.id, lookup) })),
          truncated: result.truncated || view.truncated,
        });
      }),
  );
}
