/**
 * Host side of the bridge: answers the isolate's host calls. One entry point, {@link HostBridge.handle},
 * takes a JSON request `[op, payload]` and always resolves to a JSON envelope
 * `{ok, value, error}` — it never rejects, so no host Error (with its stack and file paths) is ever
 * copied into the isolate. Errors become one short line, paths removed.
 *
 * Every call is counted against `maxHostCalls` and raced against the block's abort signal, which fires
 * at the wall-clock limit or when the caller aborts; the signal is also handed to llm_query hosts.
 */

import { isRlmError } from '../../core/errors.ts';
import { withoutHostPaths } from '../../core/host-paths.ts';
import { fileIdOf, isPart, partOwners } from '../../memory/graph-rules.ts';
import { type GrepChunk, GrepRunner } from '../../memory/grep/grep.ts';
import { documentLinks, documentTags, readTarget } from '../../memory/read.ts';
import {
  type ChunkReader,
  type DocumentText,
  type GrepOptions,
  type GrepResult,
  LINK_TYPES,
  type LinkType,
  type SearchOptions,
} from '../../memory/types.ts';
import { clamp, grepFiles, joinedLength, sliceDocuments, sliceFiles } from './context-reads.ts';
import { storeDocuments, textDocuments } from './documents.ts';
import type { ContextFileRef, DocumentEntry, SandboxHost, SubCallItem, SubCallOptions } from './host.ts';
import { MAX_BATCH_ITEMS } from './names.ts';

/** Where the context's text lives, as far as host calls are concerned. */
export type ContextMode = 'loaded' | 'host' | 'none';

export interface BridgeOptions {
  host: SandboxHost;
  /** The context documents (the host keeps them for `host` mode and for sub-call hosts). */
  documents: readonly string[];
  contextMode: ContextMode;
  maxHostCalls: number;
}

interface Envelope {
  ok: boolean;
  value: unknown;
  error: string | null;
}

class HostCallError extends Error {}

const MAX_ERROR_CHARS = 300;
/** Characters one host grep may return (lines and their context), and the sizes it is computed from. */
const GREP_TEXT_BUDGET = 64 * 1024 * 1024;
const GREP_LINE_CHARS = 502;
const GREP_DEFAULT_LIMIT = 100;
/** Longest schema text a sub-call may carry to the host. */
const MAX_SCHEMA_TEXT = 64 * 1024;
/** Longest search query (its analysis runs on the host's main thread, linear in its words). */
const MAX_QUERY_CHARS = 10_000;
/**
 * Words in one search query: each costs the host's main thread up to half a millisecond (typo
 * expansion of an unknown word), and a block may search a thousand times.
 */
const MAX_QUERY_WORDS = 200;
/** Longest grep pattern the host will parse (about 70 ms for the slowest unicode classes). */
const MAX_GREP_PATTERN_CHARS = 4096;
/** Longest text one peek returns when the host serves it (as long as encode takes one string). */
const MAX_PEEK_CHARS = 16 * 1024 * 1024;
/** Names in one `document` filter: more than a filter needs, and a bound on the host's work for one. */
const MAX_DOCUMENT_NAMES = 100_000;

/** One line, no paths, bounded: what the model may learn from a host failure. */
export function modelMessage(op: string, err: unknown): string {
  let text = err instanceof Error ? err.message : typeof err === 'string' ? err : 'failed';
  text = withoutHostPaths(text.split('\n')[0] ?? '').trim() || 'failed';
  if (text.length > MAX_ERROR_CHARS) text = `${text.slice(0, MAX_ERROR_CHARS)}…`;
  const code =
    isRlmError(err) && err.code !== 'BAD_INPUT' && err.code !== 'VALIDATION' ? `${err.code}: ` : '';
  return text.startsWith(`${op}:`) ? text : `${op}: ${code}${text}`;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new HostCallError(`${what} must be a string`);
  return v;
}

function int(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : fallback;
}

function stringList(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return undefined;
}

export class HostBridge {
  /** Host calls made by the current (or last) block. */
  hostCalls = 0;
  private readonly opts: BridgeOptions;
  private controller: AbortController | null = null;
  private expired: string | null = null;
  private grepRunner: GrepRunner | null = null;
  private paths: Map<string, string> | null = null;
  private textDocs: DocumentEntry[] | null = null;

  constructor(opts: BridgeOptions) {
    this.opts = opts;
  }

  /** Opens a block: resets the call counter; `signal` aborts the block's host calls. */
  begin(): AbortSignal {
    this.hostCalls = 0;
    this.expired = null;
    this.controller = new AbortController();
    return this.controller.signal;
  }

  /** Fails in-flight and later host calls of this block with `message` (wall-clock limit, abort). */
  expire(message: string): void {
    if (this.expired !== null) return;
    this.expired = message;
    this.controller?.abort(new HostCallError(message));
  }

  end(): void {
    this.controller = null;
  }

  /** The function the isolate calls (through a Reference). Never rejects. */
  readonly handle = async (request: unknown): Promise<string> => {
    let op = 'host call';
    try {
      if (typeof request !== 'string') throw new HostCallError('malformed request');
      const parsed: unknown = JSON.parse(request);
      if (!Array.isArray(parsed) || typeof parsed[0] !== 'string')
        throw new HostCallError('malformed request');
      op = parsed[0];
      const payload = (parsed[1] ?? {}) as Record<string, unknown>;
      const controller = this.controller;
      if (controller === null) throw new HostCallError('host calls only work while a block runs');
      if (this.expired !== null) throw new HostCallError(this.expired);
      if (++this.hostCalls > this.opts.maxHostCalls) {
        throw new HostCallError(
          `host call limit reached (${this.opts.maxHostCalls} per block); ${LIMIT_ADVICE[op] ?? 'do the work in fewer calls'}`,
        );
      }
      const value = await raceSignal(this.dispatch(op, payload, controller.signal), controller.signal);
      return JSON.stringify({ ok: true, value: value ?? null, error: null } satisfies Envelope);
    } catch (err) {
      return JSON.stringify({
        ok: false,
        value: null,
        error: modelMessage(displayName(op), err),
      } satisfies Envelope);
    }
  };

  /** Frees the grep worker of a host-served context. */
  async close(): Promise<void> {
    const runner = this.grepRunner;
    this.grepRunner = null;
    await runner?.close();
  }

  /** The documents of a multi-document or store context; `doc:N` entries when the host gave none. */
  private async listDocuments(): Promise<DocumentEntry[]> {
    const given = this.opts.host.documents;
    if (given !== undefined)
      return (typeof given === 'function' ? await given() : given).map((d) => ({ ...d }));
    if (this.opts.host.store !== undefined) return storeDocuments(await this.store());
    if (this.opts.contextMode === 'none') return [];
    // Hashing the texts costs a pass over them: once per session.
    this.textDocs ??= textDocuments(this.opts.documents);
    return this.textDocs.map((d) => ({ ...d }));
  }

  /** The host's store, built first when it is built on first use (a run's --context files). */
  private async store(): Promise<ChunkReader> {
    const store = this.opts.host.store;
    if (!store) throw new HostCallError('no chunk store is loaded');
    return typeof store === 'function' ? store() : store;
  }

  /**
   * The context's documents as store documents, when the context is a run's --context files: grep, peek
   * and document filters read their text (in the isolate when it is loaded there; here, from the files,
   * when it is too large), and the index is not built for them.
   */
  private contextFiles(): readonly ContextFileRef[] | null {
    const files = this.opts.host.contextFiles;
    if (files === undefined || this.opts.host.context !== undefined || this.opts.contextMode === 'none')
      return null;
    return files;
  }

  private async dispatch(op: string, p: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const host = this.opts.host;
    switch (op) {
      case 'llm':
      case 'rlm': {
        if (!host.llmQuery) throw new HostCallError('no model configured (pass --model)');
        const item = subCallItem(p, 'prompt');
        const opts: SubCallOptions = { kind: op };
        if (item.model !== undefined) opts.model = item.model;
        if (item.schema !== undefined) opts.schema = item.schema;
        const answer = String(await host.llmQuery(item.prompt, item.context, signal, opts));
        if (item.schema === undefined) return answer;
        // Structured output: the checked value, or the failure thrown where the code asked.
        if (answer.startsWith('Error:')) throw new HostCallError(answer.slice('Error:'.length).trim());
        return JSON.parse(answer) as unknown;
      }
      case 'llm_batched':
      case 'rlm_batched': {
        const kind = op === 'rlm_batched' ? 'rlm' : 'llm';
        // As the prelude bounds it (prelude/sub-calls.ts), checked again here.
        if (Array.isArray(p.items) && p.items.length > MAX_BATCH_ITEMS)
          throw new HostCallError(`at most ${MAX_BATCH_ITEMS} items in one batch`);
        const items = Array.isArray(p.items)
          ? p.items.map((x, i) => subCallItem(x, `item ${i}: prompt`))
          : [];
        let answers: string[];
        if (host.llmQueryBatched) answers = await host.llmQueryBatched(items, signal, { kind });
        else {
          if (!host.llmQuery) throw new HostCallError('no model configured (pass --model)');
          const one = host.llmQuery;
          answers = await Promise.all(
            items.map((q) => {
              const opts: SubCallOptions = { kind };
              if (q.model !== undefined) opts.model = q.model;
              if (q.schema !== undefined) opts.schema = q.schema;
              return one(q.prompt, q.context, signal, opts);
            }),
          );
        }
        return batchResult(items, answers);
      }
      case 'list_documents':
        return await this.listDocuments();
      case 'peek':
        return this.peek(p);
      case 'grep':
        return this.grep(str(p.pattern, 'pattern'), (p.opts ?? {}) as Record<string, unknown>);
      case 'search': {
        const o = (p.opts ?? {}) as Record<string, unknown>;
        const opts: SearchOptions = {};
        if (typeof o.k === 'number') opts.k = Math.max(1, Math.min(1000, Math.floor(o.k)));
        const document = stringList(o.document);
        // As grep's: ids or paths, a file's parts together, and a name of nothing an error the model sees.
        if (document) opts.document = await this.documentIds(document);
        const tags = stringList(o.tags);
        if (tags) opts.tags = tags;
        const type = stringList(o.type);
        if (type) opts.type = type as SearchOptions['type'] & string[];
        if (typeof o.fuzzy === 'boolean') opts.fuzzy = o.fuzzy;
        if (typeof o.topic === 'string') opts.topic = o.topic; // memories of one topic
        if (o.archived === true) opts.archived = true;
        if (o.mode === 'bm25' || o.mode === 'vector' || o.mode === 'hybrid') opts.mode = o.mode;
        const query = str(p.query, 'query');
        // Analysed on the host's main thread (typo expansion per unknown word): keep it a query.
        if (query.length > MAX_QUERY_CHARS)
          throw new HostCallError(`the query is ${query.length} characters; at most ${MAX_QUERY_CHARS}`);
        // Words as the analyser cuts them: at anything not a letter or digit (commas too).
        const words = query.split(/[^\p{L}\p{N}]+/u).filter(Boolean).length;
        if (words > MAX_QUERY_WORDS)
          throw new HostCallError(
            `the query has ${words} words; at most ${MAX_QUERY_WORDS}: give the words that matter (grep finds exact text)`,
          );
        const store = await this.store();
        const hits = await store.search(query, opts);
        const paths = await this.pathMap();
        // A hit in a later part of a file names the file, as grep's matches and list_documents() do.
        // Only a hit in a part needs the list (a big file's: few stores hold one).
        const owners = partOwners(
          hits.some((h) => isPart(h.document)) ? (await store.documents()).map((d) => d.id) : [],
        );
        return hits.map((h) => {
          const document = owners.get(h.document) ?? h.document;
          return {
            id: h.id,
            score: h.score,
            preview: h.preview,
            document,
            path: paths.get(document) ?? document,
            tokens: h.tokens,
            tags: h.tags,
            type: h.type,
          };
        });
      }
      case 'get_chunk': {
        const store = await this.store();
        const target = await readTarget(store, str(p.id, 'id'));
        if (!target) return null;
        if (target.kind === 'chunk') {
          store.touch([target.chunk.id]);
          return target.chunk;
        }
        return documentAsChunk(store, target.read);
      }
      case 'neighbors': {
        const id = str(p.id, 'id');
        let type: LinkType | undefined;
        if (p.type !== undefined) {
          if (!LINK_TYPES.includes(p.type as LinkType))
            throw new HostCallError(`type must be one of ${LINK_TYPES.join(', ')}`);
          type = p.type as LinkType;
        }
        const store = await this.store();
        const target = await readTarget(store, id, { end: 0 });
        if (!target) throw unknownIdError(id);
        const links =
          target.kind === 'chunk'
            ? await store.neighbors(target.chunk.id, type)
            : await documentLinks(store, target.read.documents, type);
        const self = target.kind === 'chunk' ? target.chunk.id : undefined;
        const inside = new Set(target.kind === 'document' ? target.read.documents.map((d) => d.id) : []);
        const isSelf = (end: string) => end === self || inside.has(end.slice(0, end.lastIndexOf(':')));
        return links.map((l) => ({
          id: isSelf(l.from) ? l.to : l.from,
          type: l.type,
          strength: l.strength,
          from: l.from,
          to: l.to,
        }));
      }
      default:
        throw new HostCallError('unknown operation');
    }
  }

  private async peek(p: Record<string, unknown>): Promise<string> {
    const files = this.contextFiles();
    const docs = this.opts.documents;
    if (p.id === undefined) {
      if (this.opts.contextMode === 'none') throw new HostCallError('no context is loaded');
      const start = int(p.start, 0);
      const end = int(p.end, start + 2000);
      const lengths = files === null ? docs.map((d) => d.length) : files.map((f) => f.text.chars);
      const [s, e] = clamp(joinedLength(lengths), start, end);
      checkPeekSize(e - s);
      return files === null ? sliceDocuments(docs, start, end) : sliceFiles(files, start, end);
    }
    const id = str(p.id, 'id');
    const doc = /^doc:(\d+)$/.exec(id);
    const file = files?.findIndex((f) => f.id === id) ?? -1;
    const at = doc && this.opts.contextMode !== 'none' ? Number(doc[1]) : file;
    if (at >= 0 && at < (files ?? docs).length) {
      // Checked before a file is read: its length is known without it.
      const chars = files === null ? docs[at]!.length : files[at]!.text.chars;
      const [s, e] = clamp(chars, int(p.start, 0), int(p.end, chars));
      checkPeekSize(e - s);
      const text = files === null ? docs[at]! : await files[at]!.text.string();
      return text.slice(s, e);
    }
    if (!this.opts.host.store) throw new HostCallError(`no chunk with id ${id}`);
    const store = await this.store();
    const range = {
      ...(p.start === undefined ? {} : { start: int(p.start, 0) }),
      ...(p.end === undefined ? {} : { end: int(p.end, Number.MAX_SAFE_INTEGER) }),
    };
    const target = await readTarget(store, id, range);
    if (!target) throw unknownIdError(id);
    if (target.kind === 'document') {
      checkPeekSize(target.read.text.length);
      touchDocument(store, target.read);
      return target.read.text;
    }
    const { chunk } = target;
    store.touch([chunk.id]);
    const [s, e] = clamp(chunk.text.length, int(p.start, 0), int(p.end, chunk.text.length));
    return chunk.text.slice(s, e);
  }

  private async grep(pattern: string, o: Record<string, unknown>): Promise<unknown> {
    // The host parses the pattern on its main thread (memory/grep/grep.ts checks its syntax there), and V8
    // parses unicode property classes slowly: a megabyte of `\p{L}` stalls the event loop for seconds.
    if (pattern.length > MAX_GREP_PATTERN_CHARS) {
      throw new HostCallError(
        `the pattern is ${pattern.length} characters; at most ${MAX_GREP_PATTERN_CHARS} (split it into several greps)`,
      );
    }
    const opts: GrepOptions = { literal: o.literal === true, ignoreCase: o.ignoreCase === true };
    if (o.count === true) opts.count = true;
    if (typeof o.context === 'number') opts.context = Math.floor(o.context);
    // Matches are built on the host: a line (at most ~500 characters) plus `context` characters either
    // side each, so the limit is cut to keep one answer within GREP_TEXT_BUDGET whatever the isolate
    // checked (a getter can answer differently the second time it is read).
    const around = Number.isFinite(opts.context) ? Math.min(Math.max(opts.context ?? 0, 0), 10_000) : 0;
    const most = Math.max(1, Math.floor(GREP_TEXT_BUDGET / (2 * around + GREP_LINE_CHARS)));
    opts.limit = Math.min(typeof o.limit === 'number' ? Math.floor(o.limit) : GREP_DEFAULT_LIMIT, most);
    const document = stringList(o.document);
    if (document) opts.document = await this.documentIds(document);
    // No timeoutMs from the model: the host's default bounds a catastrophic regex (a grep worker is
    // shared by every later grep of the session, and of every session on the same store).
    // --context files are scanned whole, by document, without their index: read from the files here
    // (when loaded in the isolate, it greps them there).
    const files = this.contextFiles();
    const store = files === null && this.opts.host.store !== undefined ? await this.store() : undefined;
    let r: GrepResult;
    if (store) r = await store.grep(pattern, opts);
    else if (files !== null) r = await grepFiles(files, pattern, opts);
    else {
      if (this.opts.contextMode !== 'host') throw new HostCallError('no chunk store is loaded');
      if (this.grepRunner === null) {
        const corpus: GrepChunk[] = this.opts.documents.map((text, i) => {
          const id = `doc:${i}`;
          return { id, text, document: id };
        });
        this.grepRunner = new GrepRunner(corpus);
      }
      r = await this.grepRunner.grep(pattern, opts);
    }
    const paths = await this.pathMap();
    if (r.counts !== undefined) {
      const { matches, lines, documents } = r.counts;
      return {
        counts: {
          matches,
          lines,
          documents: documents.map((d) => ({
            id: d.id,
            path: paths.get(d.id) ?? d.id,
            matches: d.matches,
            lines: d.lines,
          })),
        },
      };
    }
    const matches = r.matches.map((m) => {
      // A store's chunk ids are DOCUMENT:N; a store that does not say the document is read from the id.
      const document =
        m.document ?? (store ? m.id.slice(0, Math.max(0, m.id.lastIndexOf(':'))) || m.id : m.id);
      return {
        id: m.id,
        document,
        path: paths.get(document) ?? document,
        offset: m.offset,
        ...(m.documentOffset === undefined ? {} : { documentOffset: m.documentOffset }),
        text: m.text,
        before: m.before,
        after: m.after,
      };
    });
    return { matches, truncated: r.truncated };
  }

  /**
   * Document ids for what the model wrote in `document`: ids, the paths list_documents() shows, or the
   * paths a store's files were ingested from. A name nothing answers to is an error, not "no matches".
   */
  private async documentIds(names: string[]): Promise<string[]> {
    if (names.length > MAX_DOCUMENT_NAMES)
      throw new HostCallError(
        `document names at most ${MAX_DOCUMENT_NAMES.toLocaleString('en-US')} documents (got ${names.length.toLocaleString('en-US')}); leave it out to search them all`,
      );
    const ids = new Set<string>();
    const byPath = new Map<string, string[]>();
    const add = (path: string | null, id: string) => {
      if (path === null) return;
      const list = byPath.get(path);
      if (list === undefined) byPath.set(path, [id]);
      else if (!list.includes(id)) list.push(id);
    };
    const files = this.contextFiles();
    if (files !== null) {
      // --context files: their ids, shown paths and absolute paths, known without their index.
      for (const f of files) {
        ids.add(f.id);
        add(f.path, f.id);
        add(f.file, f.id);
      }
    } else {
      for (const d of await this.listDocuments()) {
        ids.add(d.id);
        add(d.path, d.id);
      }
      // The paths a store was ingested from work too (absolute, as `rlm ls` shows them), and the ids
      // of a file's later parts, which list_documents() folds into the file.
      const store = this.opts.host.store === undefined ? undefined : await this.store();
      for (const d of (await store?.documents()) ?? []) {
        ids.add(d.id);
        add(d.path, d.id);
      }
    }
    // A file stored in parts is one document to the model: its first part's id brings the others.
    const laterParts = new Map<string, string[]>();
    for (const id of ids) {
      const file = fileIdOf(id);
      if (file === id) continue;
      const list = laterParts.get(file);
      if (list === undefined) laterParts.set(file, [id]);
      else list.push(id);
    }
    const out = new Set<string>();
    for (const name of new Set(names)) {
      const found = ids.has(name) ? [name, ...(laterParts.get(name) ?? [])] : byPath.get(name);
      if (found === undefined)
        throw new HostCallError(
          `no document ${JSON.stringify(name)}; list_documents() shows every id and path`,
        );
      for (const id of found) out.add(id);
    }
    return [...out];
  }

  /** Each document's shown path (list_documents) by id; --context files' without their index. */
  private async pathMap(): Promise<Map<string, string>> {
    if (this.paths === null) {
      const files = this.contextFiles();
      const docs = files ?? (await this.listDocuments());
      this.paths = new Map(docs.map((d) => [d.id, d.path]));
    }
    return this.paths;
  }
}

/** What to do instead when a block hits the host-call limit, by the function that hit it. */
const LIMIT_ADVICE: Record<string, string> = {
  llm: 'send the prompts in one llm_query_batched(items) call',
  rlm: 'send the prompts in one rlm_query_batched(items) call',
  llm_batched: 'put all the items in one llm_query_batched call',
  rlm_batched: 'put all the items in one rlm_query_batched call',
  list_documents: 'call list_documents() once and keep the result in a variable',
  peek: 'read a whole document with one peek(DOC_ID), or a range with peek(DOC_ID, start, end), instead of chunk by chunk',
  get_chunk:
    'read a whole document with one peek(DOC_ID) instead of chunk by chunk, and keep what you need in variables',
  grep: 'use one grep with an alternation (a|b|c) or {document: [...]}, and {count: true} when you only need how many',
  search: 'search less often with a larger k, and keep the results in variables',
  neighbors: "keep the results in variables; get_chunk(id) gives a chunk's start and end in its document",
};

/**
 * Refuses a peek longer than {@link MAX_PEEK_CHARS}: served by the host (a context too big for the
 * isolate, a store's document), it is built and sent whole, and an isolate could not hold it anyway.
 */
function checkPeekSize(chars: number): void {
  if (chars > MAX_PEEK_CHARS)
    throw new HostCallError(
      `peek returns at most ${MAX_PEEK_CHARS.toLocaleString('en-US')} characters at once (this asks for ${chars.toLocaleString('en-US')}); read it in slices, or grep it`,
    );
}

/** An id that names nothing, with the forms accepted and where the model finds them. */
function unknownIdError(id: string): HostCallError {
  return new HostCallError(
    `no chunk or document with id ${id} (a chunk id DOCUMENT:N from search_chunks or grep, or a document id from list_documents)`,
  );
}

/** A document read counts as an access of its first chunk (a memory's only one). */
function touchDocument(store: ChunkReader, read: DocumentText): void {
  store.touch(read.documents.filter((d) => d.chunks > 0).map((d) => `${d.id}:0`));
}

/**
 * `get_chunk(DOCUMENT_ID)`: the whole document as one record shaped like a chunk, so code written for
 * chunks works on it: its text whole, offsets 0..length, token total, tags, and `chunks` (how many it
 * has; ids DOCUMENT_ID:0 ...), plus `parts` for a file stored in parts.
 */
function documentAsChunk(store: ChunkReader, read: DocumentText): Record<string, unknown> {
  touchDocument(store, read);
  const first = read.documents[0]!;
  return {
    id: first.id,
    document: first.id,
    start: 0,
    end: read.length,
    tokens: read.documents.reduce((n, d) => n + d.tokens, 0),
    tags: documentTags(read.documents),
    chunks: read.documents.reduce((n, d) => n + d.chunks, 0),
    ...(read.documents.length > 1 ? { parts: read.documents.map((d) => d.id) } : {}),
    createdAt: first.ingestedAt,
    text: read.text,
  };
}

const DISPLAY: Record<string, string> = {
  llm: 'llm_query',
  llm_batched: 'llm_query_batched',
  rlm: 'rlm_query',
  rlm_batched: 'rlm_query_batched',
  search: 'search_chunks',
};

/** A sub-call item as the isolate sent it: a string prompt, an optional string context and model. */
function subCallItem(v: unknown, what: string): SubCallItem {
  const o = (v ?? {}) as Record<string, unknown>;
  const item: SubCallItem = { prompt: str(o.prompt, what) };
  if (typeof o.context === 'string') item.context = o.context;
  if (typeof o.model === 'string') item.model = o.model;
  // The isolate sends the schema as JSON text (encoded there, so no getter of model code runs here).
  if (typeof o.schema === 'string') {
    // Parsed on the host's main thread: bounded before it is parsed (runtime/structured.ts allows less).
    if (o.schema.length > MAX_SCHEMA_TEXT)
      throw new HostCallError(
        `${what.replace(/: prompt$/, '')}: the schema is ${o.schema.length} characters; keep it short`,
      );
    try {
      item.schema = JSON.parse(o.schema) as unknown;
    } catch {
      throw new HostCallError(`${what.replace(/: prompt$/, '')}: schema must be plain JSON`);
    }
  }
  return item;
}

/**
 * A batch's answers as the isolate gets them: every answer in order (with a schema, the checked value,
 * or null when it failed) and the failures listed, so code that asked sees them.
 */
function batchResult(
  items: readonly SubCallItem[],
  answers: readonly string[],
): { values: unknown[]; errors: { index: number; error: string }[] } {
  const errors: { index: number; error: string }[] = [];
  const values = answers.map((raw, index) => {
    const answer = String(raw);
    const failed = answer.startsWith('Error:');
    if (failed) errors.push({ index, error: answer });
    if (items[index]?.schema === undefined) return answer;
    return failed ? null : (JSON.parse(answer) as unknown);
  });
  return { values, errors };
}

function displayName(op: string): string {
  return DISPLAY[op] ?? op;
}

function raceSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
