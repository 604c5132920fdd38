import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ChunkerName } from '../../../memory/types.ts';
import { RlmError } from '../../errors.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, writeJson } from '../io.ts';
import { formatBytes, ProgressBar } from '../progress.ts';
import { checkNewStoreDir, openStore, storeDir } from '../store-arg.ts';

const HELP = `usage: rlm ingest PATH... --store DIR [options]

Adds files and folders to the store (created if missing). Unchanged files are skipped, changed ones
replaced. Binary files are skipped with a note.

options:
  --store DIR          the store folder (default: $RLM_STORE); created if missing
  --create             allow making a store in a folder that already holds other files
  --chunker NAME       size | paragraph | lines | turn | markdown (default: by file type)
  --chunk-tokens N     size chunker window (default 2000)
  --overlap-tokens N   size chunker overlap (default 200)
  --tag TAG            add a tag to every chunk (repeatable)
  --prune              forget documents ingested from these folders whose files are gone
  --embedder SPEC      enable vector search: hash, hash:DIM, openai:MODEL, ollama:MODEL (fixed per store)
  --json               print {documents, chunks, links, tokens, added, updated, skipped, elapsedMs}
                       (and removed, with --prune)
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
  const chunkTokens = intFlag(values['chunk-tokens'], 'chunk-tokens', 16);
  const overlapTokens = intFlag(values['overlap-tokens'], 'overlap-tokens', 0);
  if (chunkTokens !== undefined && overlapTokens !== undefined && overlapTokens >= chunkTokens) {
    throw new RlmError('BAD_INPUT', '--overlap-tokens must be smaller than --chunk-tokens');
  }
  // Checked before the store is opened, so a typo never leaves an empty store behind.
  const paths = positionals.map((p) => path.resolve(io.cwd, p));
  for (const p of paths)
    if (!existsSync(p)) throw new RlmError('BAD_INPUT', `no such file or directory: ${p}`);
  checkNewStoreDir(storeDir(values.store, io), values.create);
  const store = await openStore(values.store, io, {
    create: true,
    ...(values.embedder ? { embedder: values.embedder } : {}),
  });
  const bar = new ProgressBar(io.stderr);
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    const report = await store.ingestPaths(paths, {
      ...(values.prune ? { prune: true } : {}),
      ...(chunker ? { chunker } : {}),
      ...(chunkTokens !== undefined ? { chunkTokens } : {}),
      ...(overlapTokens !== undefined ? { overlapTokens } : {}),
      ...(values.tag ? { tags: values.tag } : {}),
      signal: controller.signal,
      onProgress: (p) => {
        const label = `${p.filesDone}/${p.filesTotal} files ${formatBytes(p.bytesDone)}/${formatBytes(p.bytesTotal)} ${p.phase}${p.current ? ` ${path.basename(p.current)}` : ''}`;
        bar.update(p.bytesDone, p.bytesTotal, label, p.phase === 'commit');
      },
    });
    bar.done();
    for (const n of report.notes) io.stderr.write(`rlm: note: ${n.path}: ${n.note}\n`);
    const { notes: _notes, removed, ...data } = report;
    if (values.json) writeJson(io, values.prune ? { ...data, removed } : data);
    else {
      io.stdout.write(
        `${report.added} added, ${report.updated} updated, ${report.skipped} skipped (unchanged)${values.prune ? `, ${removed} removed` : ''} in ${report.elapsedMs} ms\n` +
          `store: ${report.documents} documents, ${report.chunks} chunks, ${report.links} links, ${report.tokens} tokens\n`,
      );
    }
    return EXIT_OK;
  } finally {
    bar.done();
    process.off('SIGINT', onSignal);
    await store.close();
  }
}
