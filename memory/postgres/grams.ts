/**
 * What grep's trigram index covers in a PostgreSQL store: for each document, its distinct tokens (runs
 * of characters other than space, tab, line feed and carriage return) joined by spaces. A text that
 * contains a literal contains each of the literal's tokens inside one of its own, so the documents whose
 * tokens contain all of them (`grams LIKE '%token%'`, which pg_trgm's index answers) are all those that
 * can match. A document's tokens are about a fifth of its text: indexing them, instead of every chunk's
 * text, costs an ingest a sixth as much (measured: 3 s against 20 s for 100 MB of prose), and grep reads
 * whole documents anyway.
 */

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

/** A document's tokens as stored in `documents.grams`: from the text of its chunks. */
export function documentGrams(texts: readonly string[]): string {
  const tokens = new Set<string>();
  for (const t of texts) addTokens(t, tokens);
  return [...tokens].join(' ');
}

/** The tokens of a literal a document's `grams` must each contain. */
export function literalTokens(literal: string): string[] {
  const tokens = new Set<string>();
  addTokens(literal, tokens);
  return [...tokens];
}
