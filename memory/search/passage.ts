/**
 * Where a query meets a chunk's text: the words whose index terms are among the query's, the passage
 * that holds most of them (a search preview), and the spans to highlight in it. Words are compared
 * through the analyzer, so `tokens` matches a query for "token" and `refreshToken` one for "refresh".
 */
import { type Analyzer, defaultAnalyzer } from './analyzer.ts';

/** A matching word: `[start, end)` in the text, and the query term it matched. */
export interface WordMatch {
  start: number;
  end: number;
  term: string;
}

const WORD_RE = /[\p{L}\p{N}\p{M}]+/gu;
/** Matches looked at per text: enough to place a preview, bounded for huge chunks. */
const MAX_MATCHES = 500;

/** The query's index terms in either language, as search uses them. */
export function queryTerms(query: string, analyzer: Analyzer = defaultAnalyzer()): Set<string> {
  return new Set(analyzer.queryGroups(query).flat());
}

/** Words of `text` whose English or French terms include one of `terms`, in text order. */
export function matchingWords(
  text: string,
  terms: ReadonlySet<string>,
  analyzer: Analyzer = defaultAnalyzer(),
): WordMatch[] {
  const out: WordMatch[] = [];
  if (terms.size === 0) return out;
  for (const m of text.matchAll(WORD_RE)) {
    const word = m[0];
    const term =
      analyzer.analyze(word, 'en').find((t) => terms.has(t)) ??
      analyzer.analyze(word, 'fr').find((t) => terms.has(t));
    if (term !== undefined) {
      out.push({ start: m.index, end: m.index + word.length, term });
      if (out.length >= MAX_MATCHES) break;
    }
  }
  return out;
}

/**
 * A one-line preview of at most `width` characters: the window with the most distinct query terms
 * (the first such), starting a little before its first match; the text's start when nothing matches.
 * Whitespace runs become one space; `…` marks cut ends.
 */
export function passage(
  text: string,
  query: string,
  width = 200,
  analyzer: Analyzer = defaultAnalyzer(),
): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= width) return flat;
  const matches = matchingWords(flat, queryTerms(query, analyzer), analyzer);
  let best = 0;
  let bestCount = 0;
  for (let i = 0; i < matches.length; i++) {
    const from = matches[i]!.start;
    const seen = new Set<string>();
    for (let j = i; j < matches.length && matches[j]!.end <= from + width - 2; j++)
      seen.add(matches[j]!.term);
    if (seen.size > bestCount) {
      bestCount = seen.size;
      best = from;
    }
  }
  if (bestCount === 0) return `${flat.slice(0, width - 1)}…`;
  // A few words of lead-in, cut at a space, so the match is not the very first character.
  let start = Math.max(0, best - Math.floor(width / 5));
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    start = space !== -1 && space < best ? space + 1 : best;
  }
  const end = Math.min(flat.length, start + width - (start > 0 ? 2 : 1));
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
}

/** `text` with each word matching the query wrapped by `open` and `close` (terminal colours, say). */
export function highlight(
  text: string,
  query: string,
  open: string,
  close: string,
  analyzer: Analyzer = defaultAnalyzer(),
): string {
  const matches = matchingWords(text, queryTerms(query, analyzer), analyzer);
  let out = '';
  let at = 0;
  for (const m of matches) {
    out += `${text.slice(at, m.start)}${open}${text.slice(m.start, m.end)}${close}`;
    at = m.end;
  }
  return out + text.slice(at);
}
