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
import { type GrepChunk, GrepRunner } from '../../memory/grep/grep.ts';
import {
  type ChunkReader,
  type GrepOptions,
  LINK_TYPES,
  type LinkType,
  type SearchOptions,
} from '../../memory/types.ts';
import { storeDocuments } from './documents.ts';
import type { DocumentEntry, SandboxHost, SubCallItem } from './host.ts';

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
/** Longest search query (its analysis runs on the host's main thread, linear in its words). */
const MAX_QUERY_CHARS = 10_000;
/** Longest grep pattern the host will parse (about 70 ms for the slowest unicode classes). */
const MAX_GREP_PATTERN_CHARS = 4096;

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

function clamp(length: number, start: number, end: number): [number, number] {
  const s = start < 0 ? Math.max(0, length + start) : Math.min(start, length);
  const e = end < 0 ? Math.max(0, length + end) : Math.min(end, length);
  return [s, Math.max(s, e)];
}

/** Slice of all documents read as one text with a newline between documents (same as the isolate's). */
export function sliceDocuments(docs: readonly string[], start: number, end: number): string {
  const total = docs.reduce((n, d, i) => n + d.length + (i > 0 ? 1 : 0), 0);
  const [s, e] = clamp(total, start, end);
  let out = '';
  let base = 0;
  for (let i = 0; i < docs.length && base < e; i++) {
    if (i > 0) {
      if (base >= s && base < e) out += '\n';
      base += 1;
    }
    const d = docs[i]!;
    const from = Math.max(s - base, 0);
    const to = Math.min(e - base, d.length);
    if (to > from) out += d.slice(from, to);
    base += d.length;
  }
  return out;
}

export class HostBridge {
  /** Host calls made by the current (or last) block. */
  hostCalls = 0;
  private readonly opts: BridgeOptions;
  private controller: AbortController | null = null;
  private expired: string | null = null;
  private grepRunner: GrepRunner | null = null;
  private shownPaths: Map<string, string> | null = null;

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
          `host call limit reached (${this.opts.maxHostCalls} per block); batch the work: llm_query_batched, fewer searches`,
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
    if (given !== undefined) return given.map((d) => ({ ...d }));
    if (this.opts.host.store !== undefined) return storeDocuments(await this.store());
    if (this.opts.contextMode === 'none') return [];
    return this.opts.documents.map((text, i) => ({
      id: `doc:${i}`,
      path: `doc:${i}`,
      chars: text.length,
      chunks: 1,
      modified: null,
    }));
  }

  /** The host's store, built first when it is built on first use (a run's --context files). */
  private async store(): Promise<ChunkReader> {
    const store = this.opts.host.store;
    if (!store) throw new HostCallError('no chunk store is loaded');
    return typeof store === 'function' ? store() : store;
  }

  private async dispatch(op: string, p: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const host = this.opts.host;
    switch (op) {
      case 'llm':
      case 'rlm': {
        if (!host.llmQuery) throw new HostCallError('no model configured (pass --model)');
        const item = subCallItem(p, 'prompt');
        const opts = { kind: op, ...(item.model === undefined ? {} : { model: item.model }) } as const;
        return String(await host.llmQuery(item.prompt, item.context, signal, opts));
      }
      case 'llm_batched':
      case 'rlm_batched': {
        const kind = op === 'rlm_batched' ? 'rlm' : 'llm';
        const items = Array.isArray(p.items)
          ? p.items.map((x, i) => subCallItem(x, `item ${i}: prompt`))
          : [];
        if (host.llmQueryBatched) {
          const answers = await host.llmQueryBatched(items, signal, { kind });
          return answers.map((a) => String(a));
        }
        if (!host.llmQuery) throw new HostCallError('no model configured (pass --model)');
        const one = host.llmQuery;
        return Promise.all(
          items.map(async (q) =>
            String(await one(q.prompt, q.context, signal, { kind, ...(q.model ? { model: q.model } : {}) })),
          ),
        );
      }
      case 'list_documents':
        return this.listDocuments();
      case 'peek':
        return this.peek(p);
      case 'grep':
        return this.grep(str(p.pattern, 'pattern'), (p.opts ?? {}) as Record<string, unknown>);
      case 'search': {
        const o = (p.opts ?? {}) as Record<string, unknown>;
        const opts: SearchOptions = {};
        if (typeof o.k === 'number') opts.k = Math.max(1, Math.min(1000, Math.floor(o.k)));
        const document = stringList(o.document);
        if (document) opts.document = document;
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
        const hits = await (await this.store()).search(query, opts);
        const paths = await this.paths();
        return hits.map((h) => ({
          id: h.id,
          score: h.score,
          preview: h.preview,
          document: h.document,
          path: paths.get(h.document) ?? h.document,
          tokens: h.tokens,
          tags: h.tags,
          type: h.type,
        }));
      }
      case 'get_chunk': {
        const store = await this.store();
        const chunk = store.getChunk(str(p.id, 'id'));
        if (!chunk) return null;
        store.touch([chunk.id]);
        return chunk;
      }
      case 'neighbors': {
        const id = str(p.id, 'id');
        let type: LinkType | undefined;
        if (p.type !== undefined) {
          if (!LINK_TYPES.includes(p.type as LinkType))
            throw new HostCallError(`type must be one of ${LINK_TYPES.join(', ')}`);
          type = p.type as LinkType;
        }
        return (await this.store()).neighbors(id, type).map((l) => ({
          id: l.from === id ? l.to : l.from,
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
    const docs = this.opts.documents;
    if (p.id === undefined) {
      if (this.opts.contextMode === 'none') throw new HostCallError('no context is loaded');
      const start = int(p.start, 0);
      return sliceDocuments(docs, start, int(p.end, start + 2000));
    }
    const id = str(p.id, 'id');
    const doc = /^doc:(\d+)$/.exec(id);
    if (doc && this.opts.contextMode !== 'none' && Number(doc[1]) < docs.length) {
      const text = docs[Number(doc[1])]!;
      const [s, e] = clamp(text.length, int(p.start, 0), int(p.end, text.length));
      return text.slice(s, e);
    }
    const store = this.opts.host.store === undefined ? undefined : await this.store();
    const chunk = store?.getChunk(id);
    if (!store || !chunk) throw new HostCallError(`no chunk with id ${id}`);
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
    if (typeof o.context === 'number') opts.context = Math.floor(o.context);
    // Matches are built on the host: a line (at most ~500 characters) plus `context` characters either
    // side each, so the limit is cut to keep one answer within GREP_TEXT_BUDGET whatever the isolate
    // checked (a getter can answer differently the second time it is read).
    const around = Number.isFinite(opts.context) ? Math.min(Math.max(opts.context ?? 0, 0), 10_000) : 0;
    const most = Math.max(1, Math.floor(GREP_TEXT_BUDGET / (2 * around + GREP_LINE_CHARS)));
    opts.limit = Math.min(typeof o.limit === 'number' ? Math.floor(o.limit) : GREP_DEFAULT_LIMIT, most);
    const document = stringList(o.document);
    if (document) opts.document = document;
    // No timeoutMs from the model: the host's default bounds a catastrophic regex (a grep worker is
    // shared by every later grep of the session, and of every session on the same store).
    if (this.opts.host.store !== undefined) {
      const store = await this.store();
      const r = await store.grep(pattern, opts);
      const paths = await this.paths();
      const matches = r.matches.map((m) => {
        const document = store.getChunk(m.id)?.document ?? m.id;
        return { ...m, path: paths.get(document) ?? document };
      });
      return { matches, truncated: r.truncated };
    }
    if (this.opts.contextMode !== 'host') throw new HostCallError('no chunk store is loaded');
    if (this.grepRunner === null) {
      const corpus: GrepChunk[] = this.opts.documents.map((text, i) => ({
        id: `doc:${i}`,
        text,
        document: `doc:${i}`,
      }));
      this.grepRunner = new GrepRunner(corpus);
    }
    const r = await this.grepRunner.grep(pattern, opts);
    const paths = await this.paths();
    return {
      matches: r.matches.map((m) => ({ ...m, path: paths.get(m.id) ?? m.id })),
      truncated: r.truncated,
    };
  }

  /** Each document's shown path (list_documents) by id; a document without one shows its id. */
  private async paths(): Promise<Map<string, string>> {
    if (this.shownPaths === null) {
      const paths = new Map<string, string>();
      for (const d of await this.listDocuments()) paths.set(d.id, d.path);
      this.shownPaths = paths;
    }
    return this.shownPaths;
  }
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
  return item;
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
