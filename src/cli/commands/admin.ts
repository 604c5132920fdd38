import { RlmError } from '../../../core/errors.ts';
import { repairStore } from '../../../memory/files/repair.ts';
import { isPostgresUrl } from '../../../memory/open.ts';
import { documentList } from '../../shapes.ts';
import { parseCommandArgs } from '../args.ts';
import { ask, type CliIO, canAsk, EXIT_FAILURE, EXIT_OK, writeJson } from '../io.ts';
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
      'usage: rlm stats --store DIR [--json]\n\nStore totals: documents, chunks, links, tokens, bytes.\n',
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

export async function rm(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(
      'usage: rlm rm DOCUMENT --store DIR [--json]\n\nForgets a document (by id or by the path it was ingested from), its chunks and links.\n',
    );
    return EXIT_OK;
  }
  const [doc] = positionals(pos, ['DOCUMENT'], 'rm');
  const store = await openStore(values.store, io);
  try {
    const removed = await store.removeDocument(doc!);
    if (values.json) writeJson(io, { removed });
    else
      io.stderr.write(
        removed
          ? `removed ${doc}\n`
          : `rlm: no document ${doc} in the store (rlm ls lists ids and paths) [NOT_FOUND]\n`,
      );
    return removed ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await store.close();
  }
}

const REPAIR_HELP = `usage: rlm repair --store DIR [--embedder SPEC|none] [--yes] [--json]

Rebuilds derived files (manifest, documents, indexes, links, vectors) from the chunk files, and
compacts segments (drops the chunks of replaced or removed documents). A damaged chunk file is read
record by record: documents whose chunks are all readable are kept. Before dropping any document,
repair lists them with the files to ingest again and asks (on a terminal) or needs --yes; otherwise
nothing is changed and it exits 1.

  --embedder SPEC   rebuild vectors with this embedder (hash, openai:MODEL, ...); none removes vectors
  --yes             drop unreadable documents without asking
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
  if (isPostgresUrl(dir))
    throw new RlmError(
      'BAD_INPUT',
      'rlm repair rebuilds the files of a store folder; a PostgreSQL store keeps its tables consistent itself (copy it with rlm store copy to rebuild it)',
    );
  const report = await repairStore(dir, {
    env: io.env,
    ...(values.embedder ? { embedder: values.embedder } : {}),
    confirm: async (dropped) => {
      const list = dropped.map((d) => `  ${d.path ?? `(no file) ${d.id}`}\n`).join('');
      io.stderr.write(
        `rlm: ${dropped.length} document${dropped.length === 1 ? '' : 's'} cannot be kept (chunks unreadable); ingest again:\n${list}`,
      );
      if (values.yes) return true;
      if (!canAsk(io)) return false;
      return /^y(es)?$/i.test((await ask(io, 'drop them and repair the rest? [y/N] ')).trim());
    },
  });
  if (values.json) writeJson(io, report);
  else {
    for (const a of report.actions) io.stderr.write(`- ${a}\n`);
    if (report.applied)
      io.stdout.write(
        `repaired: ${report.documents} documents, ${report.chunks} chunks in ${report.segments} segments\n`,
      );
  }
  if (!report.applied) {
    io.stderr.write('rlm: nothing was changed; run `rlm repair --yes` to drop them and repair the rest\n');
    return EXIT_FAILURE;
  }
  return EXIT_OK;
}

const LS_HELP = `usage: rlm ls --store DIR [--json]

Lists the store's documents: file (or id), chunks, tokens and when the store last took in a new
version. --json prints {documents:[{id, path, chunks, tokens, modified}]}.
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
          `${d.path === null ? d.id : shownPath(d.path, io)}  ${d.chunks} chunks  ${d.tokens} tokens  ${d.modified.slice(0, 19).replace('T', ' ')}  ${d.id}\n`,
        );
      if (list.documents.length === 0) io.stderr.write('the store holds no documents (rlm ingest PATH)\n');
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}
