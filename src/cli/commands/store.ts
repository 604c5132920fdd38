/** `rlm store copy SRC DST`: copies a store between backends (folder ↔ PostgreSQL), losslessly. */

import { keepHeapNearLiveSet } from '../../../core/batch-heap.ts';
import { isRlmError, RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { copyStore } from '../../../memory/copy.ts';
import { openStore as openAny } from '../../../memory/open.ts';
import type { Store } from '../../../memory/store-api.ts';
import { parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, EXIT_USAGE, writeJson, writeWarning } from '../io.ts';
import { ProgressBar } from '../progress.ts';
import { checkNewStoreDir, positionals, storeDir } from '../store-arg.ts';

const HELP = `usage: rlm store copy SRC DST [--create] [--json]

Copies the store SRC into DST, which must be new or empty. Each is a store folder or a PostgreSQL URL
(postgres://USER:PASSWORD@HOST:PORT/DATABASE, ?schema=NAME for one of several stores in a database), so
a store moves between backends in either direction. Everything is copied as stored: documents (paths,
tags, importer facts), chunks, hand-made links, access stats and memories with their weights, archive
flags and settings; related_to links are computed again, and a store with an embedder gives DST the
same one, which embeds the chunks as they are written (PostgreSQL needs pgvector for it). Prints what
it copied.

  --create   allow making DST in a folder that already holds other files
  --json     print {documents, chunks, links, memories, elapsedMs}
`;

/**
 * DST, made with SRC's embedder so vector search works there as it did. A PostgreSQL server without
 * pgvector cannot keep vectors: the copy goes on without them, and a warning says how to add them.
 */
async function openDestination(dst: string, embedder: string | null, io: CliIO): Promise<Store> {
  const warn = (message: string) => writeWarning(io, message);
  const opts = { env: io.env, create: true, onWarning: warn };
  if (embedder === null) return openAny(dst, opts);
  try {
    return await openAny(dst, { ...opts, embedder });
  } catch (err) {
    if (!isRlmError(err, 'BAD_INPUT') || err.details.pgvector !== false) throw err;
    warn(
      `${err.message.replace(/; BM25 search.*$/, '')}: the copy has no vectors, and its search matches words. ` +
        `Once the server has pgvector, \`rlm repair --store URL --embedder ${embedder}\` adds them.`,
    );
    return openAny(dst, opts);
  }
}

export default async function store(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    json: { type: 'boolean' },
    create: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  // No subcommand is a usage error, its usage the diagnostic, as for `rlm` and `rlm claude`.
  if (pos.length === 0) {
    io.stderr.write(HELP);
    return EXIT_USAGE;
  }
  const [command, ...rest] = pos;
  if (command !== 'copy')
    throw new RlmError('BAD_INPUT', `store: unknown command '${command}' (rlm store --help)`);
  const [srcName, dstName] = positionals(rest, ['SRC', 'DST'], 'store copy');
  const src = storeDir(srcName, io);
  const dst = storeDir(dstName, io);
  if (src === dst) throw new RlmError('BAD_INPUT', 'store copy: SRC and DST are the same store');
  checkNewStoreDir(dst, values.create);
  const from = await openAny(src, { env: io.env });
  try {
    const to = await openDestination(dst, from.embedder, io);
    try {
      const bar = new ProgressBar(io.stderr);
      // Every document passes through in batches: the heap is kept near its live set (batch-heap.ts).
      const heapSettled = keepHeapNearLiveSet({ after: 'stopped', growthPercent: 50 });
      const report = await copyStore(from, to, {
        onProgress: (p) =>
          bar.update(
            p.documentsDone,
            p.documentsTotal,
            `copied ${p.documentsDone}/${plural(p.documentsTotal, 'document')}`,
          ),
      }).finally(heapSettled);
      bar.done();
      if (values.json) writeJson(io, report);
      else
        io.stdout.write(
          `copied ${from.location} to ${to.location}: ${plural(report.documents, 'document')}, ${plural(report.chunks, 'chunk')}, ` +
            `${plural(report.links, 'link')}, ${plural(report.memories, 'memory', 'memories')} (${report.elapsedMs} ms)\n`,
        );
      return EXIT_OK;
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}
