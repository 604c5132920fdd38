import path from 'node:path';
import { RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import {
  documentLinks,
  type ReadTarget,
  readTarget,
  searchDocumentIds,
  unknownId,
} from '../../../memory/read.ts';
import { highlight } from '../../../memory/search/passage.ts';
import { CHUNK_TYPES, type ChunkReader, type ChunkType } from '../../../memory/types.ts';
import {
  documentPeekResult,
  grepResults,
  lookupFor,
  peekResult,
  roundScore,
  searchResults,
} from '../../shapes.ts';
import { intFlag, parseCommandArgs, tagsFlag } from '../args.ts';
import { type CliIO, EXIT_OK, readerGone, shown, stdoutColor, writeJson, writeWarning } from '../io.ts';
import { openStore, positionals } from '../store-arg.ts';

const SEARCH_HELP = `usage: rlm search QUERY --store DIR [-k N] [--document ID]... [--tag T]... [--type T] [--mode M] [--json]

Ranked search (BM25 with English/French stemming and typo tolerance; hybrid with vectors when the store
has an embedder). --mode bm25|vector|hybrid. Each result names its file and shows the passage that
matches best, the query's words highlighted on a terminal (not with NO_COLOR). --document takes a
document id or the path it was ingested from; an unknown one is an error (exit 2). --type keeps
chunks of a type (fact, decision, preference, pattern, note, code, text) or memories (memory).
--store falls back to $RLM_STORE.
--json prints {results:[{id, score, preview, document, path, tags}]}.
`;

export async function search(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    k: { type: 'string', short: 'k' },
    document: { type: 'string', multiple: true },
    tag: { type: 'string', multiple: true },
    type: { type: 'string', multiple: true },
    mode: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io, SEARCH_HELP);
  const [query] = positionals(pos, ['QUERY'], 'search');
  if (query!.trim() === '') throw new RlmError('BAD_INPUT', 'search: the query is empty');
  const k = intFlag(values.k, '-k', 1) ?? 10;
  // `memory` is a kind of document, not a chunk type: the store keeps memories only for it.
  for (const t of values.type ?? []) {
    if (t !== 'memory' && !CHUNK_TYPES.includes(t as ChunkType))
      throw new RlmError('BAD_INPUT', `--type must be one of ${CHUNK_TYPES.join(', ')} or memory`);
  }
  const mode = values.mode as 'bm25' | 'vector' | 'hybrid' | undefined;
  if (mode !== undefined && !['bm25', 'vector', 'hybrid'].includes(mode))
    throw new RlmError('BAD_INPUT', '--mode must be bm25, vector or hybrid');
  const tags = tagsFlag(values.tag, '--tag');
  const store = await openStore(values.store, io);
  try {
    // --document takes ids or the paths documents were ingested from, like `rlm rm`.
    const documents = values.document
      ? await searchDocumentIds(store, values.document, (d) => path.resolve(io.cwd, d))
      : undefined;
    const hits = await store.search(query!, {
      k,
      ...(documents ? { document: documents } : {}),
      ...(tags ? { tags } : {}),
      ...(values.type ? { type: values.type as (ChunkType | 'memory')[] } : {}),
      ...(mode ? { mode } : {}),
      onWarning: (message) => writeWarning(io, message),
    });
    if (values.json) {
      writeJson(io, searchResults(hits));
    } else if (hits.length === 0) {
      io.stderr.write('no results\n');
    } else {
      const color = stdoutColor(io);
      for (const h of hits) {
        const text = shown(io.stdout, h.preview, true);
        const preview = color ? highlight(text, query!, BOLD_RED, RESET) : text;
        const tags = h.tags.length ? ` ${shown(io.stdout, h.tags.join(','), true)}` : '';
        io.stdout.write(
          `${shown(io.stdout, h.id, true)}  ${roundScore(h.score)}  ${shownPath(h.path, io)}  [${h.type}${tags}]\n    ${preview}\n`,
        );
      }
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const PEEK_HELP = `usage: rlm peek ID --store DIR [--json]

Prints what ID names: one chunk (ID is DOCUMENT:N), or a whole document when ID is a document id, a
memory id (mem-…) or the path a file was ingested from (a big file stored in parts prints whole). The
id, file and tags go to stderr. --store falls back to $RLM_STORE.
--json prints {id, text, tokens, document, path, tags, links} (for a document: its links to other
documents).
`;

export async function peek(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io, PEEK_HELP);
  const [id] = positionals(pos, ['ID'], 'peek');
  const store = await openStore(values.store, io);
  try {
    const target = await resolveTarget(store, id!, io);
    if (target.kind === 'chunk') {
      const { chunk } = target;
      store.touch([chunk.id]);
      const result = peekResult(chunk, await store.neighbors(chunk.id), await lookupFor(store, [chunk.id]));
      if (values.json) {
        writeJson(io, result);
        return EXIT_OK;
      }
      const label = (s: string) => shown(io.stderr, s, true);
      io.stderr.write(
        `${label(chunk.id)}  ${shownPath(result.path, io, io.stderr)}  ${plural(chunk.tokens, 'token')}  type ${chunk.type}${chunk.section ? `  § ${label(chunk.section)}` : ''}${chunk.tags.length ? `  tags ${label(chunk.tags.join(','))}` : ''}\n`,
      );
      const text = shown(io.stdout, chunk.text);
      io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      return EXIT_OK;
    }
    const { read } = target;
    // A document read is an access of its first chunk: a memory's only one.
    store.touch(read.documents.filter((d) => d.chunks > 0).map((d) => `${d.id}:0`));
    const result = documentPeekResult(read, await documentLinks(store, read.documents));
    if (values.json) {
      writeJson(io, result);
      return EXIT_OK;
    }
    const chunks = read.documents.reduce((n, d) => n + d.chunks, 0);
    io.stderr.write(
      `${shown(io.stderr, result.id, true)}  ${shownPath(result.path, io, io.stderr)}  ${plural(chunks, 'chunk')}  ${plural(result.tokens, 'token')}${read.documents.length > 1 ? `  ${plural(read.documents.length, 'part')}` : ''}${result.tags.length ? `  tags ${shown(io.stderr, result.tags.join(','), true)}` : ''}\n`,
    );
    const text = shown(io.stdout, read.text);
    io.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

/** What an id given on the command line names: as an id, else as a path from the working folder. */
export async function resolveTarget(store: ChunkReader, id: string, io: CliIO): Promise<ReadTarget> {
  const target = await readTarget(store, id);
  if (target) return target;
  const read = await store.readDocument(path.resolve(io.cwd, id));
  if (read) return { kind: 'document', read };
  throw unknownId(id, 'rlm ls lists documents, rlm search finds chunks');
}

const GREP_HELP = `usage: rlm grep PATTERN --store DIR [-F] [-i] [-c] [--limit N] [--document ID|PATH]... [--json]

Regex (JavaScript syntax) or literal (-F) search over all chunk text, each document read as one text.
Each line shows the file, the chunk id and the offset in the chunk. A pattern that needs more than 10 s
of CPU plus 50 ms per million characters scanned is stopped (exit 1, TIMEOUT). --store falls back to
$RLM_STORE.
  -F                   the pattern is a literal string
  -i                   ignore case
  -c, --count          count instead: every occurrence per document, no --limit; one line per
                       matching document (FILE:COUNT), the totals on stderr
  --limit N            matches to print (default 100, at most 100,000); a note on stderr says when
                       more exist, unless the reader of the output has gone (| head)
  --document ID|PATH   only this document (a document id or the path a file was ingested from;
                       repeatable); an unknown one is an error (exit 2)
--json prints {matches:[{id, offset, text, path}], truncated}, or with --count
{counts:{matches, lines, documents:[{id, path, matches, lines}]}}.
`;

export async function grep(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    fixed: { type: 'boolean', short: 'F' },
    'ignore-case': { type: 'boolean', short: 'i' },
    limit: { type: 'string' },
    document: { type: 'string', multiple: true },
    count: { type: 'boolean', short: 'c' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io, GREP_HELP);
  const [pattern] = positionals(pos, ['PATTERN'], 'grep');
  const limit = intFlag(values.limit, '--limit', 1) ?? 100;
  const store = await openStore(values.store, io);
  try {
    const result = await store.grep(pattern!, {
      limit,
      timeoutMs: GREP_TIMEOUT_MS,
      ...(values.fixed ? { literal: true } : {}),
      ...(values['ignore-case'] ? { ignoreCase: true } : {}),
      ...(values.document ? { document: values.document } : {}),
      ...(values.count ? { count: true } : {}),
    });
    if (result.counts !== undefined) {
      const { matches, lines, documents } = result.counts;
      const lookup = await lookupFor(
        store,
        documents.map((d) => d.id),
      );
      const shown = documents.map((d) => ({ ...d, path: lookup(d.id)?.path ?? null }));
      if (values.json) writeJson(io, { counts: { matches, lines, documents: shown } });
      else for (const d of shown) io.stdout.write(`${shownPath(d.path, io)}:${d.matches}\n`);
      io.stderr.write(
        `rlm: ${matches} match${matches === 1 ? '' : 'es'} on ${lines} line${lines === 1 ? '' : 's'} in ${documents.length} document${documents.length === 1 ? '' : 's'}\n`,
      );
      return EXIT_OK;
    }
    const shaped = grepResults(
      result,
      await lookupFor(
        store,
        result.matches.map((m) => m.id),
      ),
    );
    if (values.json) writeJson(io, shaped);
    else
      for (const m of shaped.matches)
        io.stdout.write(
          `${shownPath(m.path, io)}  ${shown(io.stdout, m.id, true)}:${m.offset}: ${shown(io.stdout, m.text, true)}\n`,
        );
    if (result.truncated && !readerGone(io))
      io.stderr.write(`rlm: stopped at ${limit} matches (--limit ${limit}; at most 100000)\n`);
    const slow = store instanceof ChunkStore ? store.segmentsWithoutTextColumn().length : 0;
    if (slow > 0)
      io.stderr.write(
        `rlm: ${slow} segment${slow === 1 ? ' was' : 's were'} written by an older rlm and read the slow way; ` +
          `\`rlm repair --store ${values.store ?? store.location}\` makes grep several times faster\n`,
      );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

/** Base CPU budget of a CLI grep: a person waits longer than a model's 2 s (it grows with the size scanned). */
const GREP_TIMEOUT_MS = 10_000;
const BOLD_RED = '\x1b[1;31m';
const RESET = '\x1b[0m';

/**
 * A document's file as the user would type it (relative to the working folder when inside it), as it is
 * written to `out` (stdout unless said): control characters escaped on a terminal ({@link shown}).
 */
export function shownPath(file: string | null, io: CliIO, out: { isTTY?: boolean } = io.stdout): string {
  if (file === null) return '(no file)';
  const rel = path.relative(io.cwd, file);
  return shown(out, rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file, true);
}

function help(io: CliIO, text: string): number {
  io.stdout.write(text);
  return EXIT_OK;
}
