/**
 * Reading a model reply: which ```repl blocks to run, and whether the prose ends the run with FINAL(...) or
 * FINAL_VAR(...). Fences in any other language are illustrations and never run, and a FINAL inside them
 * does not count. Prose FINAL counts only when it starts a line, is the last thing in the reply and comes
 * after every fence: models narrate "I'll finish with FINAL(answer) once verified" all the time.
 *
 * Everything here is linear in the reply's length (replies are hostile input too), and only the first
 * {@link MAX_REPLY_CHARS} characters are read.
 */

/** A ```repl block to run. */
interface CodeBlock {
  code: string;
  /** 1-based line of the opening fence in the reply. */
  line: number;
}

/** A fence that did not run but looks like the model meant it to (```js, ```javascript...). */
interface IgnoredFence {
  /** The info string as written, e.g. `javascript`. */
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/**
 * A finish request found in the reply text. For `final`, `identifier` is set when the argument is a bare
 * JavaScript identifier: the loop answers with that session variable's value when it is defined.
 */
export type FinalCall =
  | { kind: 'final'; answer: string; identifier?: string }
  | { kind: 'final_var'; name: string };

/** What the loop needs from one reply. */
export interface ParsedReply {
  /** ```repl blocks, in order. */
  blocks: CodeBlock[];
  /** Fences in a JavaScript-like language, which do not run. */
  ignored: IgnoredFence[];
  /** The FINAL / FINAL_VAR that ends the reply, if any. */
  final: FinalCall | null;
  /** The reply with every fenced block removed, trimmed: the model's prose. */
  prose: string;
  /** True when the reply was longer than {@link MAX_REPLY_CHARS} and only its start was read. */
  truncated: boolean;
}

/** Characters of a reply that are parsed; the rest is ignored (no model writes a 1 MB reply on purpose). */
export const MAX_REPLY_CHARS = 1_000_000;

/** Info-string languages that run. Only `repl`: a ```js fence is an illustration by contract. */
const RUNNABLE = new Set(['repl']);
/** Languages a model uses when it meant to run code: reported back instead of silently skipped. */
const JS_LIKE = new Set(['js', 'javascript', 'ts', 'typescript', 'jsx', 'tsx', 'node', 'mjs']);

/** An opening fence: its marker character, length and first info-string word; null for any other line. */
function fenceOpen(line: string): { char: string; length: number; lang: string } | null {
  let i = 0;
  while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  const char = line[i];
  if (char !== '`' && char !== '~') return null;
  const start = i;
  while (line[i] === char) i++;
  const length = i - start;
  if (length < 3) return null;
  const info = line.slice(i);
  // CommonMark: a backtick fence's info string holds no backtick (else it is inline code).
  if (char === '`' && info.includes('`')) return null;
  const lang = /^[ \t]*(\S*)/.exec(info)?.[1] ?? '';
  return { char, length, lang };
}

/** True when `line` closes a fence opened with `length` × `char`. */
function closesFence(line: string, char: string, length: number): boolean {
  let i = 0;
  while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  const start = i;
  while (line[i] === char) i++;
  if (i - start < length) return false;
  while (i < line.length && (line[i] === ' ' || line[i] === '\t' || line[i] === '\r')) i++;
  return i === line.length;
}

/** Splits a reply into ```repl blocks, the prose outside all fences and the FINAL that ends it. */
export function parseReply(reply: string): ParsedReply {
  const truncated = reply.length > MAX_REPLY_CHARS;
  const text = truncated ? reply.slice(0, MAX_REPLY_CHARS) : reply;
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  const ignored: IgnoredFence[] = [];
  const prose: string[] = [];
  /** Index of the first line after the last fence: a prose FINAL must start at or after it. */
  let tailLine = 0;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const open = fenceOpen(line);
    if (open === null) {
      prose.push(line);
      i++;
      continue;
    }
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !closesFence(lines[j] ?? '', open.char, open.length))
      body.push(lines[j++] ?? '');
    // An unclosed fence runs to the end of the reply: a reply cut off mid-block still shows its code.
    const lang = open.lang.toLowerCase();
    if (RUNNABLE.has(lang)) blocks.push({ code: body.join('\n'), line: i + 1 });
    else if (JS_LIKE.has(lang)) ignored.push({ lang: open.lang, line: i + 1 });
    prose.push('');
    i = j + 1;
    tailLine = i;
  }
  const tail = lines.slice(tailLine).join('\n');
  const outside = prose.join('\n');
  return { blocks, ignored, final: findFinal(tail), prose: outside.trim(), truncated };
}

/** FINAL or FINAL_VAR at the start of a line (indentation and a list bullet or quote marker allowed). */
const FINAL_AT_LINE_START = /^[ \t]*(?:[-*>][ \t]+)?(FINAL_VAR|FINAL)[ \t]*\(/gm;
/** How many line-start candidates are tried, from the last: keeps the scan linear on hostile replies. */
const MAX_CANDIDATES = 4;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Finds the FINAL(...) or FINAL_VAR(...) that ends `text` (prose with no code fences): it must start a
 * line, and its closing parenthesis must be the last non-blank character. The call may span lines; its
 * parentheses must balance. Linear: only the last few line-start candidates are scanned.
 */
export function findFinal(text: string): FinalCall | null {
  const end = text.trimEnd().length;
  if (end === 0 || text[end - 1] !== ')') return null;
  const starts: { name: string; argStart: number }[] = [];
  for (const m of text.matchAll(FINAL_AT_LINE_START)) {
    starts.push({ name: m[1] as string, argStart: m.index + m[0].length });
    if (starts.length > MAX_CANDIDATES) starts.shift();
  }
  for (let k = starts.length - 1; k >= 0; k--) {
    const { name, argStart } = starts[k] as { name: string; argStart: number };
    if (matchParen(text, argStart) !== end - 1) continue;
    const raw = text.slice(argStart, end - 1).trim();
    if (raw.length === 0) return null;
    const value = unquote(raw);
    if (name === 'FINAL_VAR') return { kind: 'final_var', name: value ?? raw };
    if (value === undefined && IDENTIFIER.test(raw)) return { kind: 'final', answer: raw, identifier: raw };
    return { kind: 'final', answer: value ?? raw };
  }
  return null;
}

/**
 * Index of the `)` closing the call whose arguments start at `from`, or -1. Quotes are honoured only where
 * a string literal could start, so an apostrophe in prose ("the user's (old) id") does not swallow the
 * rest; if that reading never balances, plain paren counting is tried.
 */
function matchParen(text: string, from: number): number {
  const quoted = scanParens(text, from, true);
  return quoted >= 0 ? quoted : scanParens(text, from, false);
}

function scanParens(text: string, from: number, honourQuotes: boolean): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (honourQuotes && (c === '"' || c === "'" || c === '`') && startsLiteral(text, i, from)) {
      const close = closeQuote(text, i);
      if (close < 0) return -1;
      i = close;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** A quote opens a literal at the start of the arguments or after an operator-like character. */
function startsLiteral(text: string, i: number, from: number): boolean {
  let k = i - 1;
  // Bounded look-back: a run of blanks long enough to matter is not an operator position anyway.
  const stop = Math.max(from, i - 64);
  while (k >= stop && (text[k] === ' ' || text[k] === '\t' || text[k] === '\n')) k--;
  return k < from || '(,+=:[{?'.includes(text[k] ?? '');
}

function closeQuote(text: string, open: number): number {
  const q = text[open];
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === q) return i;
    else if (c === '\n' && q !== '`') return -1;
  }
  return -1;
}

/** The value of an argument that is exactly one string literal, or undefined when it is anything else. */
function unquote(raw: string): string | undefined {
  const q = raw[0];
  if (raw.length < 2 || (q !== '"' && q !== "'" && q !== '`') || raw[raw.length - 1] !== q) return undefined;
  if (closeQuote(raw, 0) !== raw.length - 1) return undefined;
  const body = raw.slice(1, -1);
  if (q === '`' && body.includes('${')) return undefined;
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/gs, (_m, e: string) => {
    if (e[0] === 'u' || e[0] === 'x') {
      const hex = e[1] === '{' ? e.slice(2, -1) : e.slice(1);
      const cp = Number.parseInt(hex, 16);
      return cp <= 0x10ffff ? String.fromCodePoint(cp) : e;
    }
    return ESCAPES[e] ?? e;
  });
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
  '\n': '',
};
