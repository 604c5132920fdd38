/*
 * In-isolate access to a context loaded as strings: `peek` slices and the local `grep`. The strings are
 * isolated-vm external strings sharing the host's copy, so nothing here copies the context; a grep
 * runs under the block's CPU limit, which is what stops a catastrophic regex.
 *
 * Grep semantics follow memory/grep/grep-scan.ts (the store's grep): one match per line, the line cut to a
 * 500-character window around the match, `before`/`after` taken around that window, ids `doc:N` (a run's
 * --context files: their store document ids and shown paths, from the session's config); with
 * `{count: true}`, every occurrence and matching line per document instead.
 */
import { intArg } from './args.ts';
import {
  $RangeError,
  $RegExp,
  $TypeError,
  brand,
  isArray,
  MathMax,
  MathMin,
  RegExpExec,
  RegExpFlags,
  RegExpSource,
  StringCharCodeAt,
  StringIndexOf,
  StringLastIndexOf,
  StringReplace,
  StringSlice,
} from './intrinsics.ts';
import { docs, sessionConfig } from './session-state.ts';

const GREP_DEFAULT_LIMIT = 100;
const GREP_MAX_LIMIT = 100000;
const GREP_MAX_CONTEXT = 10000;
/** Same bound as the host's (bridge.ts): V8 parses and compiles a regex in one uninterruptible step. */
const GREP_MAX_PATTERN = 4096;
const LINE_MAX = 500;
const LINE_LEAD = 200;
/** Characters `peek(start)` returns when no end is given. */
export const PEEK_DEFAULT = 2000;
const DOC_ID = /^doc:(\d+)$/;
const REGEX_SPECIALS = /[.*+?^${}()|[\]\\/]/g;

/** True while a local grep runs; still true after the CPU limit stops one (termination skips finally). */
let grepRunning = false;

/** Whether a local grep was running when the block stopped; clears the flag. */
export function takeGrepRunning(): boolean {
  const was = grepRunning;
  grepRunning = false;
  return was;
}

/** What grep's options and pattern come to, checked. */
export interface GrepPlan {
  source: string;
  literal: boolean;
  ignoreCase: boolean;
  limit: number;
  around: number;
  only: string[] | null;
  count: boolean;
}

/** One grep match, as the store's grep shapes it. */
export interface GrepMatch {
  id: string;
  document: string;
  path: string;
  offset: number;
  documentOffset: number;
  text: string;
  before: string;
  after: string;
}

/** What a count-mode grep returns: the store's `GrepCounts`, with paths. */
export interface GrepCounts {
  matches: number;
  lines: number;
  documents: { id: string; path: string; matches: number; lines: number }[];
}

/** Document `i`'s id: `doc:N`, or a --context file's store document id. */
function docId(i: number): string {
  const named = sessionConfig().documents;
  return named === null ? 'doc:' + i : named[i]!.id;
}

/** Document `i`'s path: its id, or a --context file's shown path. */
function docPath(i: number): string {
  const named = sessionConfig().documents;
  return named === null ? 'doc:' + i : named[i]!.path;
}

/** The document a name is: `doc:N`, or a --context file's id or shown path (`paths` true); -1 when none. */
function docIndex(name: string, paths = false): number {
  const m = RegExpExec(DOC_ID, name);
  if (m !== null) {
    const i = +m[1]!;
    return i < docs.length ? i : -1;
  }
  const named = sessionConfig().documents;
  if (named === null) return -1;
  for (let i = 0; i < named.length; i++) {
    const d = named[i]!;
    if (d.id === name || (paths && d.path === name)) return i;
  }
  return -1;
}

/** What a name that is no document should have been. */
export function documentIdsHint(): string {
  return sessionConfig().documents === null
    ? 'ids are doc:0 to doc:' + (docs.length - 1)
    : 'list_documents() shows every id and path';
}

function clampRange(length: number, start: number, end: number): [number, number] {
  const s = start < 0 ? MathMax(0, length + start) : MathMin(start, length);
  const e = end < 0 ? MathMax(0, length + end) : MathMin(end, length);
  return e < s ? [s, s] : [s, e];
}

/** Character slice of all documents read as one text, a newline between documents. */
function sliceAll(start: number, end: number): string {
  let total = 0;
  for (let i = 0; i < docs.length; i++) total += docs[i]!.length + (i > 0 ? 1 : 0);
  const r = clampRange(total, start, end);
  let out = '';
  let base = 0;
  for (let i = 0; i < docs.length && base < r[1]; i++) {
    if (i > 0) {
      if (base >= r[0] && base < r[1]) out += '\n';
      base += 1;
    }
    const d = docs[i]!;
    const from = MathMax(r[0] - base, 0);
    const to = MathMin(r[1] - base, d.length);
    if (to > from) out += StringSlice(d, from, to);
    base += d.length;
  }
  return out;
}

/** `peek` on the loaded context: a character range, or a document by id (undefined when there is none). */
export function peekLocal(a: unknown, b: unknown, c: unknown): string | undefined {
  if (typeof a === 'number') {
    const start = intArg(a, 0, 'start', 'peek');
    const end = intArg(b, start + PEEK_DEFAULT, 'end', 'peek');
    if (docs.length !== 1) return sliceAll(start, end);
    const r = clampRange(docs[0]!.length, start, end);
    return StringSlice(docs[0]!, r[0], r[1]);
  }
  const i = docIndex(a as string);
  if (i === -1) return undefined;
  const d = docs[i]!;
  const r = clampRange(d.length, intArg(b, 0, 'start', 'peek'), intArg(c, d.length, 'end', 'peek'));
  return StringSlice(d, r[0], r[1]);
}

/** Checks grep's pattern and options; the store's grep gets the same plan through the host. */
export function grepPlan(pattern: unknown, opts: unknown): GrepPlan {
  if (opts !== undefined && opts !== null && typeof opts !== 'object')
    throw new $TypeError('grep: options must be an object like {ignoreCase: true, limit: 50}');
  const o = (opts || {}) as Record<string, unknown>;
  let source: string;
  let literal = o.literal === true;
  let ignoreCase = o.ignoreCase === true;
  if (typeof pattern === 'string') {
    source = pattern;
  } else if (pattern !== null && typeof pattern === 'object' && brand(RegExpSource, pattern)) {
    source = RegExpSource(pattern);
    literal = false;
    if (StringIndexOf(RegExpFlags(pattern), 'i') !== -1) ignoreCase = true;
  } else {
    throw new $TypeError('grep: the pattern must be a string or a RegExp');
  }
  if (source === '') throw new $TypeError('grep: the pattern is empty');
  if (source.length > GREP_MAX_PATTERN)
    throw new $RangeError(
      'grep: the pattern is ' +
        source.length +
        ' characters; at most ' +
        GREP_MAX_PATTERN +
        ' (split it into several greps)',
    );
  const limit = intArg(o.limit, GREP_DEFAULT_LIMIT, 'limit', 'grep');
  const around = intArg(o.context, 0, 'context', 'grep');
  if (limit < 1 || limit > GREP_MAX_LIMIT)
    throw new $RangeError('grep: limit must be between 1 and ' + GREP_MAX_LIMIT);
  if (around < 0 || around > GREP_MAX_CONTEXT)
    throw new $RangeError('grep: context must be between 0 and ' + GREP_MAX_CONTEXT);
  let only: string[] | null = null;
  if (o.document !== undefined && o.document !== null) {
    only = [];
    const list = (isArray(o.document) ? o.document : [o.document]) as unknown[];
    for (let i = 0; i < list.length; i++) {
      const entry = list[i];
      if (typeof entry === 'string') only[only.length] = entry;
    }
  }
  return {
    source: source,
    literal: literal,
    ignoreCase: ignoreCase,
    limit: limit,
    around: around,
    only: only,
    count: o.count === true,
  };
}

function grepRegExp(plan: GrepPlan): RegExp {
  const source = plan.literal ? StringReplace(plan.source, REGEX_SPECIALS, '\\$&') : plan.source;
  let flags = 'gm' + (plan.ignoreCase ? 'i' : '');
  if (
    !plan.literal &&
    (StringIndexOf(source, '\\p{') !== -1 ||
      StringIndexOf(source, '\\P{') !== -1 ||
      StringIndexOf(source, '\\u{') !== -1)
  )
    flags += 'u';
  try {
    return new $RegExp(source, flags);
  } catch (e) {
    throw new $TypeError(
      'grep: invalid regex /' +
        source +
        '/: ' +
        (e as Error).message +
        ' (pass {literal: true} to search for the text as is)',
    );
  }
}

function grepShape(d: number, text: string, start: number, around: number): GrepMatch {
  const lineStart = StringLastIndexOf(text, '\n', start - 1) + 1;
  let lineEnd = StringIndexOf(text, '\n', start);
  if (lineEnd === -1) lineEnd = text.length;
  if (lineEnd > lineStart && StringCharCodeAt(text, lineEnd - 1) === 13) lineEnd--;
  let from = lineStart;
  let to = lineEnd;
  if (to - from > LINE_MAX) {
    from = MathMax(lineStart, start - LINE_LEAD);
    to = MathMin(lineEnd, from + LINE_MAX);
    if (to - from < LINE_MAX) from = MathMax(lineStart, to - LINE_MAX);
  }
  const line = (from > lineStart ? '…' : '') + StringSlice(text, from, to) + (to < lineEnd ? '…' : '');
  const id = docId(d);
  return {
    id: id,
    document: id,
    // A plain text or document array has no file names: the document id is its name.
    path: docPath(d),
    offset: start,
    documentOffset: start,
    text: line,
    before: around > 0 ? StringSlice(text, MathMax(0, from - around), from) : '',
    after: around > 0 ? StringSlice(text, to, to + around) : '',
  };
}

/** The local grep: [matches, truncated], or the counts. Runs inside the block, under its CPU limit. */
export function grepLocal(pattern: unknown, opts: unknown): [GrepMatch[], boolean] | GrepCounts {
  grepRunning = true;
  try {
    return grepScan(pattern, opts);
  } finally {
    grepRunning = false;
  }
}

function grepWanted(plan: GrepPlan, d: number): boolean {
  if (plan.only === null) return true;
  for (let k = 0; k < plan.only.length; k++) if (docIndex(plan.only[k]!, true) === d) return true;
  return false;
}

/** The next match at or after `from` as [start, end], or null; an empty match after a final newline is none. */
function grepFind(plan: GrepPlan, re: RegExp | null, text: string, from: number): [number, number] | null {
  let start: number;
  let end: number;
  if (re === null) {
    start = StringIndexOf(text, plan.source, from);
    if (start === -1) return null;
    end = start + plan.source.length;
  } else {
    re.lastIndex = from;
    const m = RegExpExec(re, text);
    if (m === null) return null;
    start = m.index;
    end = start + m[0].length;
  }
  if (start === text.length && StringCharCodeAt(text, start - 1) === 10) return null;
  return [start, end];
}

/** Counts every match and every matching line per document (grep's count mode). */
function grepCounts(plan: GrepPlan, re: RegExp | null): GrepCounts {
  const documents: GrepCounts['documents'] = [];
  let matches = 0;
  let lines = 0;
  for (let d = 0; d < docs.length; d++) {
    if (!grepWanted(plan, d)) continue;
    const text = docs[d]!;
    let n = 0;
    let nLines = 0;
    let lineEnd = -1;
    let from = 0;
    while (from < text.length) {
      const hit = grepFind(plan, re, text, from);
      if (hit === null) break;
      n++;
      if (hit[0] > lineEnd) {
        nLines++;
        lineEnd = StringIndexOf(text, '\n', hit[0]);
        if (lineEnd === -1) lineEnd = text.length;
      }
      from = MathMax(hit[1], hit[0] + 1);
    }
    if (n > 0) documents[documents.length] = { id: docId(d), path: docPath(d), matches: n, lines: nLines };
    matches += n;
    lines += nLines;
  }
  return { matches: matches, lines: lines, documents: documents };
}

function grepScan(pattern: unknown, opts: unknown): [GrepMatch[], boolean] | GrepCounts {
  const plan = grepPlan(pattern, opts);
  const re = plan.literal && !plan.ignoreCase ? null : grepRegExp(plan);
  if (plan.only !== null)
    for (let k = 0; k < plan.only.length; k++)
      if (docIndex(plan.only[k]!, true) === -1)
        throw new $TypeError('grep: no document ' + plan.only[k] + '; ' + documentIdsHint());
  if (plan.count) return grepCounts(plan, re);
  const out: GrepMatch[] = [];
  for (let d = 0; d < docs.length; d++) {
    if (!grepWanted(plan, d)) continue;
    const text = docs[d]!;
    let from = 0;
    while (from < text.length) {
      const hit = grepFind(plan, re, text, from);
      if (hit === null) break;
      const start = hit[0];
      const end = hit[1];
      if (out.length === plan.limit) return [out, true];
      out[out.length] = grepShape(d, text, start, plan.around);
      let next = StringIndexOf(text, '\n', start);
      next = next === -1 ? text.length + 1 : next + 1;
      from = MathMax(next, end, start + 1);
    }
  }
  return [out, false];
}
