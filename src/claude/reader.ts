/**
 * Reading one Claude Code session file into documents for the store: each user message and the
 * assistant's replies up to the next user message form an exchange, rendered as "User: …\n\nAssistant: …"
 * (tool calls as short markers, bare tool results and noise lines dropped). A session becomes one or
 * more *parts*: documents covering whole lines from byte `from` to byte `to`, so a grown session adds a
 * part for its new lines and nothing already imported is read again.
 */
import { createHash } from 'node:crypto';
import { packRange } from '../../memory/ingest/chunkers/common.ts';
import { parseChatLine } from '../../memory/ingest/chunkers/turn-jsonl.ts';
import { countTokens } from '../../memory/ingest/tokens.ts';
import type { ChunkDraft, DocumentMeta, ImportedDocument } from '../../memory/types.ts';
import { readLines } from './lines.ts';

/** Where a session file sits and what it belongs to. */
export interface SessionSource {
  file: string;
  /** The session id (the file name of a main session; the parent's id for a subagent run). */
  session: string;
  /** The subagent's id, for `subagents/agent-<id>.jsonl` files. */
  agent?: string;
  /** The project's real path. */
  project: string;
}

/** Where the previous import of the file stopped. */
export interface ResumePoint {
  from: number;
  lines: number;
  /** Exchanges imported before `from`. */
  exchanges: number;
}

export interface ReadOptions {
  /** Rendered characters per part before a new one starts (at an exchange boundary). */
  partChars?: number;
  /** Largest chunk, in tokens; a longer exchange is split. */
  chunkTokens?: number;
  /** A line skipped or left for later, with the reason. */
  onNote?: (note: string) => void;
}

const PART_CHARS = 4 * 1024 * 1024;
const CHUNK_TOKENS = 2000;
/** Bytes at the start of a file whose hash tells a grown file from a rewritten one. */
export const HEAD_BYTES = 4096;
const TITLE_CHARS = 80;

/** Id of the part of `file` that starts at byte `from`. */
function partId(file: string, from: number): string {
  return `claude-${createHash('sha1').update(file).digest('hex').slice(0, 12)}-${from}`;
}

/** A hash of the first `bytes` of a file's content, given those bytes. */
export function headHash(head: Uint8Array): string {
  return createHash('sha1').update(head).digest('hex').slice(0, 16);
}

/** The times `toISOString` writes with a four-digit year. */
const MIN_ISO_MS = Date.parse('0000-01-01T00:00:00.000Z');
const MAX_ISO_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * A time as `toISOString()` writes it (`2026-03-02T10:06:00.000Z`), or undefined when `value` is not one.
 * Session files do not all write times in one form (`10:06:00Z` beside `10:00:00.000Z`), while times
 * are compared as strings (a session's first and last, newest first) and shown side by side.
 */
export function isoTime(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  // Years 0000-9999 only: outside them toISOString writes `+275760-…` or `-000001-…`, which sort
  // wrong as strings (no session was written then anyway).
  return Number.isNaN(ms) || ms < MIN_ISO_MS || ms > MAX_ISO_MS ? undefined : new Date(ms).toISOString();
}

/** A one-line title: whitespace collapsed, cut at a word near 80 characters. */
export function shorten(text: string, max = TITLE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

interface Exchange {
  text: string;
  hasUser: boolean;
  time?: string;
  branch?: string;
  model?: string;
  lastRole: 'user' | 'assistant' | 'system' | null;
}

interface Part {
  from: number;
  texts: string[];
  chars: number;
  drafts: ChunkDraft[];
  exchanges: number;
  first?: string;
  last?: string;
  title?: string;
  prompt?: string;
  notes: string[];
}

const LABEL = { user: 'User', assistant: 'Assistant', system: 'System' } as const;

/**
 * Parts of a session from `resume` on. Every yielded part ends on a line boundary; an unfinished last line
 * (no newline, not valid JSON) is left for the next import. The last part's meta says where to resume.
 */
export async function* readSessionParts(
  src: SessionSource,
  resume: ResumePoint,
  opts: ReadOptions = {},
): AsyncGenerator<ImportedDocument> {
  const partChars = opts.partChars ?? PART_CHARS;
  const chunkTokens = opts.chunkTokens ?? CHUNK_TOKENS;
  const note = opts.onNote ?? (() => {});
  let exchangesBefore = resume.exchanges;
  let lines = resume.lines;
  let part: Part = newPart(resume.from);
  let ex: Exchange | null = null;
  let offset = resume.from;

  const closeExchange = () => {
    if (ex === null) return;
    const done: Exchange = ex;
    ex = null;
    if (done.text.trim() === '') return;
    if (done.hasUser) part.exchanges++;
    const number = exchangesBefore + part.exchanges;
    const at = part.chars + (part.texts.length > 0 ? 2 : 0);
    if (part.texts.length > 0) part.texts.push('\n\n');
    part.texts.push(done.text);
    part.chars = at + done.text.length;
    const tags = ['role:exchange'];
    if (done.branch) tags.push(`branch:${done.branch}`);
    if (done.model) tags.push(`model:${done.model}`);
    const section = `exchange ${Math.max(number, 1)}${done.hasUser ? '' : ' (continued)'}`;
    const emit = (a: number, b: number, tokens: number) => {
      if (done.text.slice(a, b).trim() === '') return;
      const d: ChunkDraft = {
        text: done.text.slice(a, b),
        start: at + a,
        end: at + b,
        tokens,
        section,
        tags,
      };
      if (done.time) d.time = done.time;
      part.drafts.push(d);
    };
    const tokens = countTokens(done.text);
    if (tokens <= chunkTokens) emit(0, done.text.length, tokens);
    else
      packRange(
        done.text,
        0,
        done.text.length,
        { maxTokens: chunkTokens, overlapTokens: 0, searchFrom: 0.9 },
        emit,
      );
  };

  const finishPart = (to: number, linesTo: number): ImportedDocument | null => {
    closeExchange();
    const p = part;
    exchangesBefore += p.exchanges;
    part = newPart(to);
    if (to === p.from) return null;
    const meta: DocumentMeta = {
      source: 'claude-code',
      file: src.file,
      session: src.session,
      project: src.project,
      from: p.from,
      to,
      lines: linesTo,
      exchanges: p.exchanges,
      before: exchangesBefore - p.exchanges,
    };
    if (src.agent) meta.agent = src.agent;
    if (p.first) meta.first = p.first;
    if (p.last) meta.last = p.last;
    if (p.title) meta.title = p.title;
    if (p.prompt) meta.prompt = p.prompt;
    const tags = ['claude', `session:${src.session}`, `project:${src.project}`];
    if (src.agent) tags.push(`agent:${src.agent}`, 'subagent');
    return {
      id: partId(src.file, p.from),
      path: src.file,
      text: p.texts.join(''),
      drafts: p.drafts,
      tags,
      meta,
      ...(p.notes.length > 0 ? { notes: p.notes } : {}),
    };
  };

  for await (const line of readLines(src.file, resume.from, resume.lines)) {
    if (line.text.trim() === '') {
      if (line.complete) {
        offset = line.end;
        lines = line.number;
      }
      continue;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(line.text);
    } catch {
      if (!line.complete) {
        note(
          `line ${line.number} is incomplete (the session is being written); it is imported once complete`,
        );
        break;
      }
      const warning = `line ${line.number} is not JSON; skipped`;
      part.notes.push(warning);
      note(warning);
      offset = line.end;
      lines = line.number;
      continue;
    }
    offset = line.end;
    lines = line.number;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) continue;
    const rec = obj as Record<string, unknown>;
    if (rec.type === 'summary' && typeof rec.summary === 'string' && part.title === undefined)
      part.title = shorten(rec.summary);
    const msg = parseChatLine(rec);
    if (msg === null) continue;
    const time = isoTime(msg.time);
    if (time === undefined) delete msg.time;
    else msg.time = time;
    // The earliest and latest times, not the first and last lines' (a file may hold them out of order).
    if (msg.time !== undefined) {
      if (part.first === undefined || msg.time < part.first) part.first = msg.time;
      if (part.last === undefined || msg.time > part.last) part.last = msg.time;
    }
    // Bare tool results are plumbing; an error result still tells something.
    if (msg.toolResultsOnly && !msg.text.includes('[tool error]')) continue;
    const role = msg.toolResultsOnly ? 'assistant' : msg.role;
    if (msg.role === 'user' && !msg.toolResultsOnly) {
      closeExchange();
      if (part.chars >= partChars) {
        const done = finishPart(line.start, line.number - 1);
        if (done) yield done;
      }
      ex = { text: '', hasUser: true, lastRole: null };
      // Slash commands arrive wrapped in tags (<command-name>/init</command-name>); the title keeps the words.
      const words = msg.text.replace(/<[^<>]*>/g, ' ').trim();
      if (part.prompt === undefined && words !== '') part.prompt = shorten(words);
    }
    ex ??= { text: '', hasUser: false, lastRole: null };
    const cur: Exchange = ex;
    if (msg.time !== undefined) cur.time ??= msg.time;
    if (msg.branch !== undefined && msg.branch !== 'HEAD') cur.branch ??= msg.branch;
    if (msg.model !== undefined) cur.model ??= msg.model;
    if (msg.text === '') continue;
    const head = role === cur.lastRole ? '\n' : `${cur.text.length > 0 ? '\n\n' : ''}${LABEL[role]}: `;
    cur.text += head + msg.text;
    cur.lastRole = role;
  }
  const last = finishPart(offset, lines);
  if (last) yield last;
}

function newPart(from: number): Part {
  return { from, texts: [], chars: 0, drafts: [], exchanges: 0, notes: [] };
}
