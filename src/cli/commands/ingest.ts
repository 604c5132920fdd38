import { existsSync } from 'node:fs';
import path from 'node:path';
import { keepHeapNearLiveSet } from '../../../core/batch-heap.ts';
import { RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { BINARY_NOTE } from '../../../memory/ingest/read-document.ts';
import { EMBEDDER_SPECS } from '../../../memory/search/embedders/specs.ts';
import type { ChunkerName, IngestReport } from '../../../memory/types.ts';
import { intFlag, parseCommandArgs, tagsFlag } from '../args.ts';
import { type CliIO, EXIT_OK, shown, writeJson, writeWarning } from '../io.ts';
import { formatBytes, ProgressBar } from '../progress.ts';
import { checkNewStoreDir, storeDir, withStore } from '../store-arg.ts';

const HELP = `usage: rlm ingest PATH... --store DIR [options]

Adds files and folders to the store (created if missing). Unchanged files are skipped, changed ones
replaced. Binary files are skipped and counted; unreadable files, broken symlinks, symlink loops, FIFOs
and sockets are skipped with a note, and so are symlinks that lead outside the paths given (unless
--follow-links); nothing in /proc, /sys or /dev is ever read. Inside folders, dot-files and dot-folders, node_modules, and what
.gitignore and .rlmignore files list are left out (one summary line says how many); .gz files are read
inflated.

options:
  --store DIR          the store folder (default: $RLM_STORE); created if missing
  --create             allow making a store in a folder that already holds other files
  --chunker NAME       size | paragraph | lines | turn | markdown (default: by file type)
  --chunk-tokens N     size chunker window (default 2000)
  --overlap-tokens N   size chunker overlap (default 200)
  --tag TAG            add a tag to every chunk (repeatable)
  --prune              forget documents ingested from these folders whose files are gone
  --exclude GLOB       leave out paths matching a .gitignore-style pattern (repeatable)
  --include-hidden     also take dot-files and dot-folders
  --no-ignore          disregard .gitignore/.rlmignore and enter node_modules too
  --follow-links       also follow symlinks that lead outside the paths given
  --verbose            list every skipped binary file
  --embedder SPEC      enable vector search: ${EMBEDDER_SPECS} (fixed when the store is
                       made; one that does not answer then leaves the store without vectors, with a
                       warning; BM25 works either way)
  --json               print {documents, chunks, links, tokens, added, updated, skipped, removed,
                       elapsedMs}: the store's totals, then this run's documents (a file over 2 MiB is
                       stored in parts, each a document; removed: what --prune forgot, else 0)
`;

const CHUNKERS: ChunkerName[] = ['size', 'paragraph', 'lines', 'turn', 'markdown'];

export default async function ingest(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    store: { type: 'string' },
    chunker: { type: 'string' },
    'chunk-tokens': { type: 'string' },
    'overlap-tokens': { type: 'string' },
    tag: { type: 'string', multiple: true },
    embedder: { type: 'string' },
    prune: { type: 'boolean' },
    create: { type: 'boolean' },
    exclude: { type: 'string', multiple: true },
    'include-hidden': { type: 'boolean' },
    'no-ignore': { type: 'boolean' },
    'follow-links': { type: 'boolean' },
    verbose: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length === 0)
    throw new RlmError('BAD_INPUT', 'ingest: give at least one file or folder (rlm ingest --help)');
  const chunker = values.chunker as ChunkerName | undefined;
  if (chunker !== undefined && !CHUNKERS.includes(chunker)) {
    throw new RlmError('BAD_INPUT', `--chunker must be one of ${CHUNKERS.join(', ')}, got '${chunker}'`);
  }
  const tags = tagsFlag(values.tag, '--tag');
  const chunkTokens = intFlag(values['chunk-tokens'], '--chunk-tokens', 16);
  const overlapTokens = intFlag(values['overlap-tokens'], '--overlap-tokens', 0);
  if (chunkTokens !== undefined && overlapTokens !== undefined && overlapTokens >= chunkTokens) {
    throw new RlmError('BAD_INPUT', '--overlap-tokens must be smaller than --chunk-tokens');
  }
  // Checked before the store is opened, so a typo never leaves an empty store behind.
  const paths = positionals.map((p) => path.resolve(io.cwd, p));
  for (const p of paths)
    if (!existsSync(p)) throw new RlmError('BAD_INPUT', `no such file or directory: ${p}`);
  checkNewStoreDir(storeDir(values.store, io), values.create);
  const heapSettled = keepHeapNearLiveSet({ after: 'stopped' });
  const bar = new ProgressBar(io.stderr);
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    return await withStore(
      values.store,
      io,
      values.embedder ? { embedder: values.embedder } : {},
      async (store) => {
        const report = await store.ingestPaths(paths, {
          ...(values.prune ? { prune: true } : {}),
          ...(chunker ? { chunker } : {}),
          ...(chunkTokens !== undefined ? { chunkTokens } : {}),
          ...(overlapTokens !== undefined ? { overlapTokens } : {}),
          ...(tags ? { tags } : {}),
          ...(values.exclude ? { exclude: values.exclude } : {}),
          ...(values['include-hidden'] ? { includeHidden: true } : {}),
          ...(values['no-ignore'] ? { noIgnore: true } : {}),
          ...(values['follow-links'] ? { followLinks: true } : {}),
          signal: controller.signal,
          onProgress: (p) => {
            const label = `${p.filesDone}/${p.filesTotal} files ${formatBytes(p.bytesDone)}/${formatBytes(p.bytesTotal)} ${p.phase}${p.current ? ` ${path.basename(p.current)}` : ''}`;
            bar.update(p.bytesDone, p.bytesTotal, label, p.phase === 'commit');
          },
        });
        bar.done();
        writeNotes(report, values.verbose === true, io);
        for (const w of report.warnings ?? []) writeWarning(io, w);
        const { removed } = report;
        // Nothing readable into a store that holds nothing: a usage error, and a store this command
        // made goes again (withStore), as after any failure.
        if (report.documents === 0 && report.added === 0 && removed === 0)
          throw new RlmError(
            'BAD_INPUT',
            `nothing to ingest: no text could be read from ${paths.length === 1 ? paths[0] : `the ${plural(paths.length, 'path')} given`}${report.notes.length > 0 ? ' (the notes above say why)' : ''}; nothing was stored`,
          );
        if (values.json) {
          const { documents, chunks, links, tokens, added, updated, skipped, elapsedMs } = report;
          writeJson(io, { documents, chunks, links, tokens, added, updated, skipped, removed, elapsedMs });
        } else {
          io.stdout.write(
            `${report.added} added, ${report.updated} updated, ${report.skipped} skipped (unchanged)${values.prune ? `, ${removed} removed` : ''} in ${report.elapsedMs} ms\n` +
              `store: ${plural(report.documents, 'document')}, ${plural(report.chunks, 'chunk')}, ${plural(report.links, 'link')}, ${plural(report.tokens, 'token')}\n`,
          );
        }
        return EXIT_OK;
      },
    );
  } finally {
    heapSettled();
    bar.done();
    process.off('SIGINT', onSignal);
  }
}

/**
 * Notes on stderr: one line per odd file, except binary files, which are counted in one line (listed
 * with --verbose); then one line for what the folder scan left out, with the flag that takes it.
 */
function writeNotes(report: IngestReport, verbose: boolean, io: CliIO): void {
  let binary = 0;
  for (const n of report.notes) {
    if (n.note.startsWith(BINARY_NOTE) && !verbose) binary++;
    else io.stderr.write(`rlm: note: ${shown(io.stderr, `${n.path}: ${n.note}`, true)}\n`);
  }
  if (binary > 0)
    io.stderr.write(`rlm: ${binary} binary file${binary === 1 ? '' : 's'} skipped (--verbose lists them)\n`);
  const p = report.passedOver;
  if (!p) return;
  const parts: string[] = [];
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  if (p.hidden > 0)
    parts.push(`${n(p.hidden, 'dot-file or folder', 'dot-files and folders')} (--include-hidden)`);
  if (p.folders > 0)
    parts.push(`${n(p.folders, 'node_modules folder', 'node_modules folders')} (--no-ignore)`);
  if (p.ignored > 0) parts.push(`${n(p.ignored, 'path', 'paths')} in .gitignore/.rlmignore (--no-ignore)`);
  if (p.excluded > 0) parts.push(`${n(p.excluded, 'path', 'paths')} matching --exclude`);
  if (parts.length > 0) io.stderr.write(`rlm: left out ${parts.join(', ')}\n`);
}
