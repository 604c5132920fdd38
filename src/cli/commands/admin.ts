import path from 'node:path';
import { keepHeapNearLiveSet } from '../../../core/batch-heap.ts';
import { isRlmError, RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { shellQuote } from '../../../core/shell.ts';
import type { DeleteReport } from '../../../memory/engine/memories.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { isPostgresUrl } from '../../../memory/open.ts';
import { redactUrl } from '../../../memory/postgres/url.ts';
import { EMBEDDER_SPECS } from '../../../memory/search/embedders/specs.ts';
import { documentList } from '../../shapes.ts';
import { parseCommandArgs } from '../args.ts';
import { ask, type CliIO, canAsk, EXIT_FAILURE, EXIT_OK, shown, writeJson } from '../io.ts';
import { formatBytes } from '../progress.ts';
import { openStore, positionals, storeDir } from '../store-arg.ts';
import { shownPath } from './query.ts';

export async function stats(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(
      'usage: rlm stats --store DIR [--json]\n\nStore totals: documents, chunks, links, tokens, bytes of text, schema version.\n' +
        '--store falls back to $RLM_STORE. --json prints {documents, chunks, links, tokens, bytes, schema, dir}.\n',
    );
    return EXIT_OK;
  }
  positionals(pos, [], 'stats');
  const store = await openStore(values.store, io);
  try {
    const s = await store.stats();
    if (values.json) writeJson(io, { ...s, dir: store.location });
    else {
      io.stdout.write(
        `${store.location}\n  documents ${s.documents}\n  chunks    ${s.chunks}\n  links     ${s.links}\n  tokens    ${s.tokens}\n  text      ${formatBytes(s.bytes)}\n  schema    ${s.schema}\n`,
      );
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const RM_HELP = `usage: rlm rm DOCUMENT --store DIR [--json]

Deletes a document for good: by id (a memory id too), or by the path it was ingested from (every part of
a big file). Its chunks, links, vectors and access stats go, and its text is rewritten out of the segment
files it shared with other documents. A consolidation summary written from a deleted memory goes too,
and that summary's other sources come back from the archive. An unknown DOCUMENT fails the command
(exit 1, NOT_FOUND) and nothing is deleted. --store falls back to $RLM_STORE.
--json prints {removed, ids, summaries, restored}: ids deleted (summaries included), the summaries, the
memories restored.
`;

export async function rm(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(RM_HELP);
    return EXIT_OK;
  }
  const [doc] = positionals(pos, ['DOCUMENT'], 'rm');
  const store = await openStore(values.store, io);
  try {
    const name = (await store.findDocument(doc!)) ? doc! : path.resolve(io.cwd, doc!);
    let report: DeleteReport;
    try {
      report = await store.deleteDocuments([name]);
    } catch (err) {
      // An error like forget's, with or without --json: stdout holds only what was done.
      if (!isRlmError(err, 'NOT_FOUND')) throw err;
      throw new RlmError('NOT_FOUND', `no document ${doc!} in the store (rlm ls lists ids and paths)`, {
        id: doc!,
      });
    }
    if (values.json) writeJson(io, { removed: true, ...deleteJson(report) });
    else
      io.stderr.write(
        `rlm: removed ${shown(io.stderr, report.deleted.join(', '), true)}\n${summaryNote(report, io.stderr)}`,
      );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

/** `{ids, summaries, restored}` of `rm --json` and `forget --json`: ids deleted, summaries included. */
export function deleteJson(r: DeleteReport): { ids: string[]; summaries: string[]; restored: string[] } {
  return { ids: [...r.deleted, ...r.summaries], summaries: r.summaries, restored: r.restored };
}

/** What a delete took along besides what was named: a line for people (written to `out`), or nothing. */
export function summaryNote(r: DeleteReport, out: { isTTY?: boolean }): string {
  if (r.summaries.length === 0) return '';
  const ids = (list: string[]) => shown(out, list.join(', '), true);
  const restored =
    r.restored.length > 0
      ? `; ${plural(r.restored.length, 'source')} restored from the archive (${ids(r.restored)})`
      : '';
  return `rlm: also deleted ${plural(r.summaries.length, 'summary', 'summaries')} written from it (${ids(r.summaries)})${restored}\n`;
}

const REPAIR_HELP = `usage: rlm repair --store DIR|URL [--embedder SPEC|none] [--yes] [--json]

Checks every segment file against its CRCs and rebuilds what does not check out (indexes, links) from
the chunk files; writes the documents, link count and manifest anew; compacts segments (drops the
chunks of replaced or removed documents); rewrites the segments of a store written before schema 3.
Intact segments are kept as they are. A chunk whose text fails its CRC (or, in a schema 1/2 chunk
file, a record that does not parse) loses its document; the others are kept. Before dropping any
document, repair lists them with the files to ingest again (a memory cannot be recovered: remember it
again) and asks (on a terminal) or needs --yes; otherwise nothing is changed and it exits 1. A folder
that lost its manifest is still found by its other files, and the memories of its journal are kept.
--store falls back to $RLM_STORE.

On a PostgreSQL store (a postgres:// URL) it rebuilds the derived tables (search index segments,
related links, each document's words for grep) from documents and chunks, removes links and access
stats of chunks that are gone, adds missing vectors, and drops (after asking, as above) documents
whose chunks are not all there. It runs while the store is in use: reads go on, and writers wait
until it is done.

  --embedder SPEC   rebuild vectors with this embedder (${EMBEDDER_SPECS}); none removes vectors
                    (the memory journal is folded first, so memories get vectors too)
  -y, --yes         drop unreadable documents without asking
  --json            print {segments, documents, chunks, actions, dropped:[{id, path}], applied}
`;

export async function repair(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    embedder: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(REPAIR_HELP);
    return EXIT_OK;
  }
  positionals(pos, [], 'repair');
  const dir = storeDir(values.store, io);
  const postgres = isPostgresUrl(dir);
  const repairAt = postgres
    ? (await import('../../../memory/postgres/store.ts')).PostgresStore.repair
    : repairStore;
  // A folder repair reads every segment; the heap is kept near its live set (batch-heap.ts).
  const heapSettled = postgres ? () => {} : keepHeapNearLiveSet({ after: 'stopped' });
  const report = await repairAt(dir, {
    env: io.env,
    ...(values.embedder ? { embedder: values.embedder } : {}),
    confirm: async (dropped) => {
      // A memory came from no file: there is nothing to ingest again, only the memory to remember again.
      const memories = dropped.filter(
        (d) => d.path === null && /^mem-|^memories-\d+\.jsonl line /.test(d.id),
      );
      const documents = dropped.filter((d) => !memories.includes(d));
      const list = (lines: string[]) => lines.map((l) => `  ${shown(io.stderr, l, true)}\n`).join('');
      if (documents.length > 0)
        io.stderr.write(
          `rlm: ${plural(documents.length, 'document')} cannot be kept (chunks unreadable); ingest again:\n${list(documents.map((d) => d.path ?? `(no file) ${d.id}`))}`,
        );
      if (memories.length > 0)
        io.stderr.write(
          `rlm: ${plural(memories.length, 'memory', 'memories')} cannot be kept (unreadable); a memory cannot be recovered, remember it again:\n${list(memories.map((d) => d.id))}`,
        );
      if (values.yes) return true;
      if (!canAsk(io)) return false;
      return /^y(es)?$/i.test((await ask(io, 'drop them and repair the rest? [y/N] ')).trim());
    },
  }).finally(heapSettled);
  if (values.json) writeJson(io, report);
  else {
    // Nothing is dropped until confirmed: a refused repair's actions say what it would have done.
    const said = report.applied ? (a: string) => a : wouldDo;
    for (const a of report.actions) io.stderr.write(`- ${shown(io.stderr, said(a), true)}\n`);
    if (report.applied)
      io.stdout.write(
        `repaired: ${plural(report.documents, 'document')}, ${plural(report.chunks, 'chunk')}${postgres ? '' : ` in ${plural(report.segments, 'segment')}`}\n`,
      );
  }
  if (!report.applied) {
    const again = repairAgain(values.store, values.embedder);
    const password = again.includes(':***@') ? ' (with the password in place of ***)' : '';
    io.stderr.write(
      `rlm: nothing was changed; run \`${shown(io.stderr, again, true)}\`${password} to drop them and repair the rest\n`,
    );
    return EXIT_FAILURE;
  }
  return EXIT_OK;
}

/**
 * The command to run a refused repair again: the one given, --store and --embedder included, with --yes.
 * A PostgreSQL URL's password stays out of it, as `***` (the user puts it back).
 */
export function repairAgain(store: string | undefined, embedder: string | undefined): string {
  const shownStore = store !== undefined && isPostgresUrl(store) ? redactUrl(store) : store;
  const command = [
    'rlm repair',
    ...(shownStore === undefined ? [] : ['--store', shellQuote(shownStore)]),
    ...(embedder === undefined ? [] : ['--embedder', shellQuote(embedder)]),
    '--yes',
  ].join(' ');
  return command;
}

/** A repair action as what a dry run would do: `dropped document X` becomes `would drop document X`. */
function wouldDo(action: string): string {
  return action.replace(/\bdropped (document|memory) /, 'would drop $1 ');
}

const LS_HELP = `usage: rlm ls --store DIR [--json]

Lists the store's documents: file (or id), chunks, tokens and when the store last took in a new
version. A big file stored in parts is one line, under its first part's id, with the parts counted.
--store falls back to $RLM_STORE. --json prints {documents:[{id, path, chunks, tokens, modified,
parts?}]} (parts: only for a file in more than one part).
`;

export async function ls(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(LS_HELP);
    return EXIT_OK;
  }
  positionals(pos, [], 'ls');
  const store = await openStore(values.store, io);
  try {
    const list = documentList(await store.documents());
    if (values.json) writeJson(io, list);
    else {
      for (const d of list.documents)
        io.stdout.write(
          `${d.path === null ? shown(io.stdout, d.id, true) : shownPath(d.path, io)}  ${plural(d.chunks, 'chunk')}  ${plural(d.tokens, 'token')}${d.parts === undefined ? '' : `  in ${plural(d.parts, 'part')}`}  ${d.modified.slice(0, 19).replace('T', ' ')}  ${shown(io.stdout, d.id, true)}\n`,
        );
      if (list.documents.length === 0) io.stderr.write('the store holds no documents (rlm ingest PATH)\n');
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
