/** `rlm_ingest`: adds files and folders to a store, with progress per file. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { isRlmError } from '../../../core/errors.ts';
import { emptyIngestReport } from '../../../memory/ingest/prepare.ts';
import type { Store } from '../../../memory/store-api.ts';
import type { ChunkerName, IngestProgress, IngestReport } from '../../../memory/types.ts';
import type { Connection } from '../connection.ts';
import { type IngestJob, ingestInChild } from '../ingest-process.ts';
import { filesOf } from '../paths.ts';
import { progressFor } from '../progress.ts';
import { guard, structured } from '../results.ts';
import type { ServerContext } from '../server-context.ts';
import { checkedStoreDir, storeArg, tagsArg } from './store-arg.ts';

const CHUNKERS = ['size', 'paragraph', 'lines', 'turn', 'markdown'] as const satisfies readonly ChunkerName[];

/** Structured output of `rlm_ingest`: `rlm ingest --json` plus the notes on skipped files. */
const ingestOutput = z.object({
  documents: z.number().int(),
  chunks: z.number().int(),
  links: z.number().int(),
  tokens: z.number().int(),
  added: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  elapsedMs: z.number(),
  notes: z.array(z.object({ path: z.string(), note: z.string() })),
});

/**
 * The report of an ingest that had nothing to read (every path named was skipped, with notes: a FIFO, a
 * `/proc` file): the store's totals, no file taken.
 */
async function nothingRead(store: Store): Promise<IngestReport> {
  const s = await store.stats();
  return {
    ...emptyIngestReport([]),
    documents: s.documents,
    chunks: s.chunks,
    links: s.links,
    tokens: s.tokens,
  };
}

/** Registers `rlm_ingest` on `server`. */
export function registerIngest(server: McpServer, ctx: ServerContext, conn: Connection): void {
  const limits = ctx.limits;
  server.registerTool(
    'rlm_ingest',
    {
      title: 'Add files to an rlm store',
      description:
        'Chunks, indexes and links files and folders into a store folder (created if missing) for rlm_answer, ' +
        'rlm_search, rlm_peek and rlm_grep. Unchanged files are skipped, changed ones replaced, binary files ' +
        'skipped with a note. Sends progress per file when asked.',
      inputSchema: z
        .object({
          paths: z
            .array(z.string().min(1, 'paths must not contain empty strings'))
            .min(1, 'paths must not be empty')
            .max(limits.maxPaths, `paths has more than ${limits.maxPaths} entries`)
            .describe('Files or folders (relative to the server\u2019s working directory).'),
          store: storeArg,
          chunker: z.enum(CHUNKERS).optional().describe('Force a chunker instead of choosing by file type.'),
          chunk_tokens: z
            .number()
            .int()
            .min(16)
            .max(100_000)
            .optional()
            .describe('Size chunker window (default 2000).'),
          overlap_tokens: z
            .number()
            .int()
            .min(0)
            .max(50_000)
            .optional()
            .describe('Size chunker overlap (default 200).'),
          tags: tagsArg(100).optional().describe('Tags added to every chunk.'),
        })
        .strict(),
      outputSchema: ingestOutput,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    (args, extra) =>
      guard('rlm_ingest', ctx, async () => {
        // Check everything that can fail cheaply before the store is opened: opening creates it.
        const dir = await checkedStoreDir(ctx, conn, args.store, extra.signal);
        const { files: paths, notes: scanNotes } = await filesOf(conn.access, args.paths, {
          maxBytes: limits.maxIngestBytes,
          tooLarge: 'ingest them in parts, or with `rlm ingest` in a terminal',
          maxEntries: limits.maxPathsEntries,
          signal: extra.signal,
        });
        const fresh = !existsSync(ctx.stores.resolve(dir));
        const store = await ctx.stores.get(dir, { create: true });
        const progress = progressFor(extra, (err) => ctx.log(`rlm serve: progress not sent: ${String(err)}`));
        const options: IngestJob['options'] = {};
        if (args.chunker !== undefined) options.chunker = args.chunker;
        if (args.chunk_tokens !== undefined) options.chunkTokens = args.chunk_tokens;
        if (args.overlap_tokens !== undefined) options.overlapTokens = args.overlap_tokens;
        if (args.tags !== undefined) options.tags = args.tags;
        const onProgress = (p: IngestProgress) => {
          const where = p.current === undefined ? '' : ` ${path.basename(p.current)}`;
          // In bytes, not files: one big file is many parts, and the value must grow to be sent.
          progress.report(
            `${p.phase}${where} (${p.filesDone}/${p.filesTotal} files)`,
            p.bytesDone,
            p.bytesTotal,
          );
        };
        const ingest = (files: string[]): Promise<IngestReport> =>
          ctx.boundIngestHeap
            ? ingestInChild(
                {
                  location: ctx.stores.resolve(dir),
                  env: ctx.env,
                  paths: files,
                  options,
                  progress: progress.enabled,
                },
                { signal: extra.signal, onProgress },
              )
            : store.ingestPaths(files, {
                ...options,
                signal: extra.signal,
                ...(progress.enabled ? { onProgress } : {}),
              });
        const notes = [...scanNotes];
        let r: IngestReport;
        try {
          r =
            paths.length === 0
              ? await nothingRead(store)
              : await ingest(paths).catch(async (err: unknown) => {
                  // A file listed here that was gone by the time the ingest looked (an editor's temp file):
                  // a note, as inside a folder, not a failed call. Once: what vanishes again is an error.
                  const gone = paths.filter((p) => !existsSync(p));
                  if (!isRlmError(err, 'BAD_INPUT') || gone.length === 0) throw err;
                  for (const p of gone) notes.push({ path: p, note: 'vanished before it was read' });
                  const left = paths.filter((p) => !gone.includes(p));
                  return left.length === 0 ? nothingRead(store) : ingest(left);
                });
        } catch (err) {
          // A cancelled first ingest leaves no empty store behind.
          if (fresh) await ctx.stores.discardIfEmpty(dir);
          throw err;
        }
        // Nor does one that found nothing to read.
        if (fresh && r.added === 0) await ctx.stores.discardIfEmpty(dir);
        // Field by field: the published outputSchema forbids extra fields, and a client that listed the
        // tools rejects a result carrying one (the store's report also has `removed`, for --prune).
        return structured({
          documents: r.documents,
          chunks: r.chunks,
          links: r.links,
          tokens: r.tokens,
          added: r.added,
          updated: r.updated,
          skipped: r.skipped,
          elapsedMs: r.elapsedMs,
          notes: [...notes, ...r.notes],
        } satisfies z.output<typeof ingestOutput>);
      }),
  );
}
