/**
 * What grep's trigram index covers in a PostgreSQL store: for each document, the distinct tokens (runs
 * of characters other than space, tab, line feed and carriage return) of its text as grep reads it (its
 * chunks assembled, memory/grep/grep-scan.ts `assemble`), joined by spaces. A text that contains a
 * literal contains each of the literal's tokens inside one of its own, so the documents whose tokens
 * contain all of them (`grams LIKE '%token%'`, which pg_trgm's index answers) are all those that can
 * match: a literal cut by a chunk edge, even mid-word, included, since the tokens are taken across the
 * edges. A document's tokens are about a fifth of its text: indexing them, instead of every chunk's
 * text, costs an ingest a sixth as much (measured: 3 s against 20 s for 100 MB of prose), and grep reads
 * whole documents anyway.
 */
import { assemble, type GrepChunk } from '../grep/grep-scan.ts';
import type { Sql } from './db.ts';

/** What grep needs of a chunk row to place it in its document's text. */
export interface GramsChunk {
  document: string;
  ordinal: number;
  start: number;
  end: number;
  text: string;
}

/**
 * A chunk as grep reads it: its offsets only where a document's chunks are not its text back to back
 * (the `size` chunker overlaps them; `turn` over JSONL renders lines), as the file stores read them.
 */
export function grepChunkOf(c: GramsChunk, chunker: string): GrepChunk {
  const chunk: GrepChunk = { id: `${c.document}:${c.ordinal}`, text: c.text, document: c.document };
  if (chunker === 'size' || chunker === 'turn') {
    chunk.start = c.start;
    chunk.end = c.end;
  }
  return chunk;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

/** Adds the tokens of `text` to `into`. */
function addTokens(text: string, into: Set<string>): void {
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    if (isSpace(text.charCodeAt(i))) {
      if (start >= 0) into.add(text.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  if (start >= 0) into.add(text.slice(start));
}

/**
 * A document's tokens as stored in `documents.grams`: from its chunks (in ordinal order) read as grep
 * reads them, `chunker` the document's.
 */
export function documentGrams(chunks: readonly GramsChunk[], chunker: string): string {
  const tokens = new Set<string>();
  if (chunks.length > 0) addTokens(assemble(chunks.map((c) => grepChunkOf(c, chunker))).text, tokens);
  return [...tokens].join(' ');
}

/** The tokens of a literal a document's `grams` must each contain. */
export function literalTokens(literal: string): string[] {
  const tokens = new Set<string>();
  addTokens(literal, tokens);
  return [...tokens];
}

/** A chunk row with its document's chunker, as read from `chunks c JOIN documents d ON d.id = c.document`. */
export interface GramsRow {
  document: string;
  ordinal: number;
  start_at: number;
  end_at: number;
  text: string;
  chunker: string;
}

/**
 * The tokens of each document whose chunk rows are among `rows` (all of its chunks, in any order), by
 * document in the order they first appear, each with the document's first row.
 */
export function gramsByDocument<R extends GramsRow>(
  rows: readonly R[],
): Map<string, { row: R; grams: string }> {
  const byDoc = new Map<string, { row: R; chunks: GramsChunk[] }>();
  for (const r of rows) {
    const d = byDoc.get(r.document) ?? { row: r, chunks: [] };
    d.chunks.push({
      document: r.document,
      ordinal: r.ordinal,
      start: r.start_at,
      end: r.end_at,
      text: r.text,
    });
    byDoc.set(r.document, d);
  }
  const out = new Map<string, { row: R; grams: string }>();
  for (const [id, d] of byDoc)
    out.set(id, {
      row: d.row,
      grams: documentGrams(
        d.chunks.sort((a, b) => a.ordinal - b.ordinal),
        d.row.chunker,
      ),
    });
  return out;
}

/** Stores the tokens `grams[i]` of document `ids[i]`. */
export async function saveGrams(sql: Sql, ids: readonly string[], grams: readonly string[]): Promise<void> {
  await sql.query(
    'UPDATE documents d SET grams = u.grams FROM unnest($1::text[], $2::text[]) AS u(id, grams) WHERE d.id = u.id',
    [ids, grams],
  );
}
