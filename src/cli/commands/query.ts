import path from 'node:path';
import { RlmError } from '../../../core/errors.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { highlight } from '../../../memory/search/passage.ts';
import { CHUNK_TYPES, type ChunkType } from '../../../memory/types.ts';
import { grepResults, lookupFor, peekResult, roundScore, searchResults } from '../../shapes.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, stdoutColor, writeJson } from '../io.ts';
import { openStore, positionals } from '../store-arg.ts';

const SEARCH_HELP = `usage: rlm search QUERY --store DIR [-k N] [--document ID]... [--tag T]... [--type T] [--mode M] [--json]

Ranked search (BM25 with English/French stemming and typo tolerance; hybrid with vectors when the store
has an embedder). --mode bm25|vector|hybrid. Each result names its file and shows the passage that
matches best, the query's words highlighted on a terminal (not with NO_COLOR).
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
  const k = intFlag(values.k, 'k', 1) ?? 10;
  for (const t of values.type ?? []) {
    if (!CHUNK_TYPES.includes(t as ChunkType))
      throw new RlmError('BAD_INPUT', `--type must be one of ${CHUNK_TYPES.join(', ')}`);
  }
  const mode = values.mode as 'bm25' | 'vector' | 'hybrid' | undefined;
  if (mode !== undefined && !['bm25', 'vector', 'hybrid'].includes(mode))
    throw new RlmError('BAD_INPUT', '--mode must be bm25, vector or hybrid');
  const store = await openStore(values.store, io);
  try {
    // --document takes ids or the paths documents were ingested from, like `rlm rm`.
    const documents = values.document
      ? await Promise.all(
          values.document.map(
            async (d) =>
              (await store.findDocument(d))?.id ??
              (await store.findDocument(path.resolve(io.cwd, d)))?.id ??
              d,
          ),
        )
      : undefined;
    const hits = await store.search(query!, {
      k,
      ...(documents ? { document: documents } : {}),
      ...(values.tag ? { tags: values.tag } : {}),
      ...(values.type ? { type: values.type as ChunkType[] } : {}),
      ...(mode ? { mode } : {}),
      onWarning: (message) => io.stderr.write(`rlm: warning: ${message}\n`),
    });
    if (values.json) {
      writeJson(io, searchResults(hits));
    } else if (hits.length === 0) {
      io.stderr.write('no results\n');
    } else {
      const color = stdoutColor(io);
      for (const h of hits) {
        const preview = color ? highlight(h.preview, query!, BOLD_RED, RESET) : h.preview;
        io.stdout.write(
          `${h.id}  ${roundScore(h.score)}  ${shownPath(h.path, io)}  [${h.type}${h.tags.length ? ` ${h.tags.join(',')}` : ''}]\n    ${preview}\n`,
        );
      }
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const PEEK_HELP = `usage: rlm peek ID --store DIR [--json]

Prints one chunk (its id, file and tags go to stderr). --json prints
{id, text, tokens, document, path, tags, links}.
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
    const chunk = await store.getChunk(id!);
    if (!chunk) throw chunkNotFound(id!);
    store.touch([chunk.id]);
    const links = await store.neighbors(chunk.id);
    const result = peekResult(chunk, links, await lookupFor(store, [chunk.id]));
    if (values.json) {
      writeJson(io, result);
    } else {
      io.stderr.write(
        `${chunk.id}  ${shownPath(result.path, io)}  ${chunk.tokens} tokens  type ${chunk.type}${chunk.section ? `  § ${chunk.section}` : ''}${chunk.tags.length ? `  tags ${chunk.tags.join(',')}` : ''}\n`,
      );
      io.stdout.write(chunk.text.endsWith('\n') ? chunk.text : `${chunk.text}\n`);
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const GREP_HELP = `usage: rlm grep PATTERN --store DIR [-F] [-i] [--limit N] [--document ID]... [--json]

Regex (JavaScript syntax) or literal (-F) search over all chunk text. A pattern that runs longer than
10 s of scanning is stopped (exit 1, TIMEOUT). Each line shows the file, the chunk id and the offset in the chunk.
--json prints {matches:[{id, offset, text, path}], truncated}.
`;

export async function grep(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    fixed: { type: 'boolean', short: 'F' },
    'ignore-case': { type: 'boolean', short: 'i' },
    limit: { type: 'string' },
    document: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io, GREP_HELP);
  const [pattern] = positionals(pos, ['PATTERN'], 'grep');
  const limit = intFlag(values.limit, 'limit', 1) ?? 100;
  const store = await openStore(values.store, io);
  try {
    const result = await store.grep(pattern!, {
      limit,
      timeoutMs: GREP_TIMEOUT_MS,
      ...(values.fixed ? { literal: true } : {}),
      ...(values['ignore-case'] ? { ignoreCase: true } : {}),
      ...(values.document ? { document: values.document } : {}),
    });
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
        io.stdout.write(`${shownPath(m.path, io)}  ${m.id}:${m.offset}: ${m.text}\n`);
    if (result.truncated) io.stderr.write(`rlm: stopped at ${limit} matches (--limit)\n`);
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

/** Scanning time a CLI grep may take: a person waits longer than a model's 2 s, on stores of any size. */
const GREP_TIMEOUT_MS = 10_000;
const BOLD_RED = '\x1b[1;31m';
const RESET = '\x1b[0m';

/** A document's file as the user would type it: relative to the working folder when inside it. */
export function shownPath(file: string | null, io: CliIO): string {
  if (file === null) return '(no file)';
  const rel = path.relative(io.cwd, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** NOT_FOUND for a chunk id, with where to find real ones. */
export function chunkNotFound(id: string): RlmError {
  return new RlmError(
    'NOT_FOUND',
    `no chunk with id ${id} (ids look like DOCUMENT:ORDINAL; rlm ls lists documents, rlm search finds chunks)`,
  );
}

function help(io: CliIO, text: string): number {
  io.stdout.write(text);
  return EXIT_OK;
}
