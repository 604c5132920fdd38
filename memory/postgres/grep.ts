/**
 * grep over a PostgreSQL store: the same bounded scan as the folder store (memory/grep/, its result
 * shape, caps, count mode, document filter and timeout), fed page by page from the chunks table, each
 * document whole on one page so that it is read as one text (matches and context across chunk edges),
 * and a file stored in parts read as one text across pages (what a part leaves to the next, seams.ts,
 * goes from page to page). When the pattern holds a literal run of three characters or more that every
 * match must contain, pg_trgm's index on each document's tokens (grams.ts) narrows the scan to the
 * documents holding all of the literal's tokens (for a file in parts: its parts together), so a
 * selective grep reads few rows. Statements run under a timeout derived from the grep's own.
 */
import { resolve } from 'node:path';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { compareDocumentIds, isPart, partLinks } from '../graph-rules.ts';
import type { GrepCarry, GrepChunk, GrepRunner } from '../grep/grep.ts';
import type { GrepCounts, GrepMatch, GrepOptions, GrepResult } from '../types.ts';
import type { Db, Sql } from './db.ts';
import { grepChunkOf, literalTokens } from './grams.ts';

/** Text per page handed to the scanner, characters. */
const PAGE_CHARS = 4 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_LIMIT = 100;

/**
 * A literal that every match of `pattern` contains (longest run of plain characters outside groups,
 * classes and optional parts), or null when there is none or the pattern has an alternation.
 */
export function requiredLiteral(pattern: string, literal: boolean): string | null {
  if (literal) return pattern;
  if (pattern.includes('|')) return null;
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    const next = pattern[i + 1];
    if (ch === '\\') {
      const e = pattern[i + 2];
      const quantified = e === '?' || e === '*' || e === '{';
      if (next !== undefined && /[.*+?^${}()|[\]\\/-]/.test(next) && !quantified) {
        run += next;
        if (e === '+') end();
        i++;
      } else {
        end();
        // The escape's body is not text either: `\x45`, `\u0045`, `\u{45}`, `\105`, `\cJ`, `\p{L}`, `\k<n>`.
        i += 1 + escapeBody(pattern, i + 2, next);
      }
      continue;
    }
    if (ch === '(' || ch === '[') {
      end();
      // Skip the whole group or class: its content may be optional or alternative.
      let depth = 0;
      for (; i < pattern.length; i++) {
        const c = pattern[i]!;
        if (c === '\\') i++;
        else if (c === '(' || c === '[') depth++;
        else if (c === ')' || c === ']') {
          depth--;
          if (depth === 0) break;
        }
      }
      continue;
    }
    if ('.^$)]}'.includes(ch)) {
      end();
      continue;
    }
    if (ch === '*' || ch === '?' || ch === '{') {
      // The character before was optional: take it back out of the run.
      run = run.slice(0, -1);
      end();
      if (ch === '{') while (i < pattern.length && pattern[i] !== '}') i++;
      continue;
    }
    if (ch === '+') {
      end();
      continue;
    }
    if (next === '*' || next === '?' || next === '{') {
      end();
      continue;
    }
    run += ch;
  }
  end();
  return best.length >= 3 ? best : null;
}

/**
 * Characters after `\` and the escape letter `kind` that belong to the escape, from `at`: the digits of
 * `\xHH` and `\uHHHH`, the braces of `\u{…}`, `\p{…}` and `\k<…>`, the letter of `\cX`, the further
 * digits of an octal escape or a back-reference. Nothing for the rest (`\d`, `\b`, …).
 */
function escapeBody(pattern: string, at: number, kind: string | undefined): number {
  const hexRun = (max: number) => {
    let n = 0;
    while (n < max && /[0-9a-fA-F]/.test(pattern[at + n] ?? '')) n++;
    return n;
  };
  const through = (close: string) => {
    const end = pattern.indexOf(close, at);
    return end < 0 ? pattern.length - at : end - at + 1;
  };
  switch (kind) {
    case 'x':
      return hexRun(2);
    case 'u':
      return pattern[at] === '{' ? through('}') : hexRun(4);
    case 'c':
      return /[A-Za-z]/.test(pattern[at] ?? '') ? 1 : 0;
    case 'p':
    case 'P':
      return pattern[at] === '{' ? through('}') : 0;
    case 'k':
      return pattern[at] === '<' ? through('>') : 0;
    default: {
      if (kind === undefined || !/[0-9]/.test(kind)) return 0;
      let n = 0;
      while (/[0-9]/.test(pattern[at + n] ?? '')) n++;
      return n;
    }
  }
}

/** A chunk grep may scan, in the order it scans them; its text is read with it or page by page. */
interface Candidate {
  seq: number;
  key: string;
  ordinal: number;
  chars: number;
  document: string;
  chunker: string;
  start_at: number;
  end_at: number;
  text?: string;
}

/** Scans of each runner, one after the other. */
const queues = new WeakMap<GrepRunner, Promise<unknown>>();

/**
 * Scans `chunks` with the shared runner. A runner takes the corpus of a call when the call is made but
 * searches when the calls before it are done, so calls at once would search each other's pages:
 * they go one at a time.
 */
function scan(
  runner: GrepRunner,
  chunks: GrepChunk[],
  pattern: string,
  opts: GrepOptions,
  carries?: Map<string, GrepCarry>,
): Promise<GrepResult> {
  const run = () => runner.grep({ version: -1, chunks, ...(carries ? { carries } : {}) }, pattern, opts);
  const result = (queues.get(runner) ?? Promise.resolve()).then(run, run);
  queues.set(
    runner,
    result.catch(() => undefined),
  );
  return result;
}

/** LIKE pattern matching text that contains `s`. */
function containsPattern(s: string, ignoreCase: boolean): string {
  let out = '';
  for (const c of s) {
    // PostgreSQL's ILIKE lowers both sides; JavaScript's /i folds case by other rules (ς, σ and Σ are one
    // letter to it, and with the u flag ſ is s and the Kelvin sign k): such characters may be any one, so
    // the prefilter is never stricter than the regex.
    if (ignoreCase && (c.codePointAt(0)! > 127 || /[sk]/i.test(c))) out += '_';
    else out += /[\\%_]/.test(c) ? `\\${c}` : c;
  }
  return `%${out}%`;
}

/**
 * The document ids a grep's `document` option names: ids (a file's first part takes its other parts, as
 * readDocument does), or paths a document was ingested from (every part of a big file). A name that
 * matches nothing is refused, as the folder store does: a typo must not read as "no matches".
 */
async function namedDocuments(sql: Sql, names: string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const name of names) {
    const { rows } = await sql.query<{ id: string }>(
      'SELECT id FROM documents WHERE id = $1 UNION ALL (SELECT id FROM documents WHERE path = $2 OR path = $3 ORDER BY first_seq)',
      [name, name, resolve(name)],
    );
    const ids = rows.some((r) => r.id === name) ? await withParts(sql, name) : rows.map((r) => r.id);
    if (ids.length === 0) {
      throw new RlmError(
        'BAD_INPUT',
        `grep: no document ${JSON.stringify(name)} in the store; give a document id or the path it was ingested from`,
      );
    }
    for (const id of ids) out.add(id);
  }
  return [...out];
}

/** Document `id` and, when it is a file's first part, the parts after it. */
async function withParts(sql: Sql, id: string): Promise<string[]> {
  if (isPart(id)) return [id];
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM documents WHERE left(id, length($1) + 2) = $1 || '.p'`,
    [id],
  );
  const all = new Set(rows.map((r) => r.id));
  const out = [id];
  for (let n = 2; all.has(`${id}.p${n}`); n++) out.push(`${id}.p${n}`);
  return out;
}

/**
 * SQL true for the chunks of documents whose text may hold every token of a literal (`tests`, one
 * condition on `g.grams` per token): a document whose tokens hold them all, and every part of a file
 * stored in parts whose parts' tokens together hold them (a match may run across a seam). A part's file
 * is its id with `.pN` taken off; its parts share its path, which is indexed.
 */
function holdingTokens(tests: string[]): string {
  const files = tests
    .map((t) => `SELECT regexp_replace(g.id, '\\.p[0-9]+$', '') FROM documents g WHERE ${t}`)
    .join(' INTERSECT ');
  return `c.document IN (
    SELECT g.id FROM documents g WHERE ${tests.join(' AND ')}
    UNION
    SELECT f.id FROM (${files}) h(id) JOIN documents d ON d.id = h.id JOIN documents f ON f.path = d.path
    WHERE f.id = h.id OR left(f.id, length(h.id) + 2) = h.id || '.p')`;
}

/** Chunk `c` as the runner reads it. */
function grepChunk(c: Candidate & { text: string }): GrepChunk {
  return grepChunkOf({ ...c, start: c.start_at, end: c.end_at }, c.chunker);
}

/** Adds one page's counts to the total (a document is on one page only, so lists just concatenate). */
function addCounts(total: GrepCounts, page: GrepCounts): void {
  total.matches += page.matches;
  total.lines += page.lines;
  total.documents.push(...page.documents);
}

/** Greps the chunks of the store (or of `opts.document`) in path order, like the folder store. */
export async function grepStore(
  db: Db,
  runner: GrepRunner,
  pattern: string,
  opts: GrepOptions,
): Promise<GrepResult> {
  const { document: named, ...rest } = opts;
  // Options and pattern are checked by the shared runner before anything is read.
  await scan(runner, [], pattern, rest);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const limit = opts.limit ?? DEFAULT_LIMIT;
  const counting = opts.count === true;
  const literal = requiredLiteral(pattern, opts.literal === true);
  const matches: GrepMatch[] = [];
  const counts: GrepCounts = { matches: 0, lines: 0, documents: [] };
  const timedOut = () =>
    new RlmError(
      'TIMEOUT',
      `grep pattern took longer than ${timeoutMs}ms — simplify the regex (avoid nested quantifiers)`,
      { timeoutMs, pattern, partial: matches },
    );
  // The budget is for work, not for waiting: each statement gets it (from when it reaches the server),
  // and each page's scan the runner's own budget, which counts CPU time and grows with the text, as in
  // the folder store. Waiting for a connection or for the runner on a busy server spends none of it.
  return db.tx(async (sql) => {
    await sql.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const docs =
      named === undefined ? null : await namedDocuments(sql, Array.isArray(named) ? named : [named]);
    const where: string[] = [];
    const params: unknown[] = [];
    if (docs) {
      params.push(docs);
      where.push(`c.document = ANY($${params.length}::text[])`);
    }
    if (literal !== null) {
      // Documents whose tokens hold each of the literal's (the trigram index finds them), read whole.
      const like = opts.ignoreCase ? 'ILIKE' : 'LIKE';
      const tests = literalTokens(literal).map((t) => {
        params.push(containsPattern(t, opts.ignoreCase === true));
        return `g.grams ${like} $${params.length}`;
      });
      if (tests.length > 0) where.push(holdingTokens(tests));
    }
    let order: Candidate[];
    try {
      order = (
        await sql.query<Candidate>(
          `SELECT c.seq, coalesce(d.path, d.id) AS key, c.ordinal, c.document, d.chunker, c.start_at, c.end_at,
                  length(c.text) AS chars
           FROM chunks c JOIN documents d ON d.id = c.document
           ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}`,
          params,
        )
      ).rows;
    } catch (err) {
      throw isRlmError(err, 'TIMEOUT') ? timedOut() : err;
    }
    // Store order: path (or id), then id (a file's parts in order), then ordinal; a document's chunks
    // stay together.
    order.sort(
      (a, b) =>
        a.key.localeCompare(b.key) ||
        (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) ||
        compareDocumentIds(a.document, b.document) ||
        a.ordinal - b.ordinal,
    );
    const links = partLinks(new Set(order.map((c) => c.document)));
    const carries = new Map<string, GrepCarry>();
    for (let i = 0; i < order.length; ) {
      let chars = 0;
      const page: Candidate[] = [];
      // Whole documents per page: a page ends only where the next chunk starts another document.
      for (
        ;
        i < order.length &&
        (page.length === 0 || chars < PAGE_CHARS || order[i]!.document === page[page.length - 1]!.document);
        i++
      ) {
        page.push(order[i]!);
        chars += order[i]!.chars;
      }
      try {
        const { rows } = await sql.query<{ seq: number; text: string }>(
          'SELECT seq, text FROM chunks WHERE seq = ANY($1::bigint[])',
          [page.map((c) => c.seq)],
        );
        const texts = new Map(rows.map((r) => [r.seq, r.text]));
        for (const c of page) {
          const text = texts.get(c.seq);
          if (text !== undefined) c.text = text;
        }
      } catch (err) {
        throw isRlmError(err, 'TIMEOUT') ? timedOut() : err;
      }
      const chunks = page.flatMap((c) => {
        if (c.text === undefined) return [];
        const chunk = grepChunk(c as Candidate & { text: string });
        return [c.ordinal === 0 ? { ...chunk, ...links.get(c.document) } : chunk];
      });
      try {
        if (counting) {
          const result = await scan(runner, chunks, pattern, { ...rest, timeoutMs }, carries);
          if (result.counts) addCounts(counts, result.counts);
          continue;
        }
        // Once the list is full, a page is only searched for one more match: it means "truncated".
        const full = matches.length >= limit;
        const result = await scan(
          runner,
          chunks,
          pattern,
          { ...rest, limit: full ? 1 : limit - matches.length, timeoutMs },
          carries,
        );
        if (full && result.matches.length > 0) return { matches, truncated: true };
        matches.push(...result.matches);
        if (result.truncated) return { matches, truncated: true };
      } catch (err) {
        if (isRlmError(err, 'TIMEOUT')) {
          matches.push(...((err.details.partial as GrepMatch[] | undefined) ?? []));
          throw timedOut();
        }
        throw err;
      }
    }
    return counting ? { matches: [], truncated: false, counts } : { matches, truncated: false };
  });
}
