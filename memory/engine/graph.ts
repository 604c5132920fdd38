/**
 * The read model of a chunk graph: documents, segments and the indexes over them, loaded lazily from a
 * {@link SegmentSource}. Both the directory store and the in-memory store answer reads through it, so
 * search, grep and links behave the same whichever holds the data.
 */

import { resolve } from 'node:path';
import { isRlmError, RlmError } from '../../core/errors.ts';
import {
  FILE_GREP_YOUNG_MB,
  type GrepChunk,
  type GrepRun,
  GrepRunner,
  type GrepSegment,
} from '../grep/grep.ts';
import { Bm25Index, type Bm25Segment } from '../search/bm25.ts';
import type { Embedder } from '../search/embedders/types.ts';
import { reciprocalRankFusion } from '../search/fusion.ts';
import { passage } from '../search/passage.ts';
import type { VectorIndex } from '../search/vectors.ts';
import {
  CHUNK_TYPES,
  type ChunkRecord,
  type ChunkType,
  type DocumentRecord,
  type GrepOptions,
  type GrepResult,
  type Link,
  type LinkType,
  type SearchHit,
  type SearchOptions,
  type StoreStats,
} from '../types.ts';
import { docIndexOf, parseChunkId, recordAt, type SegmentLinks, type SegmentMeta } from './segment.ts';

/** Where segment files come from: the store folder, or memory. Loads are synchronous and cached here. */
export interface SegmentSource {
  meta(segment: string): SegmentMeta;
  /** The segment's chunk texts in chunk order; `meta` is its meta file, which the caller has already read. */
  texts(segment: string, meta: SegmentMeta): string[];
  bm25(segment: string): Bm25Segment;
  links(segment: string): SegmentLinks;
  /**
   * The segment's text column and chunk file, when the segment lives in files (grep then reads them in
   * its worker, one at a time); undefined for a segment held in memory.
   */
  filePaths?: ((segment: string) => { text: string; chunks: string } | undefined) | undefined;
}

export interface GraphState {
  documents: Map<string, DocumentRecord>;
  segments: string[];
  /** supports / contradicts links set by hand. */
  manual: Link[];
  generation: number;
}

export interface VectorSearch {
  index: VectorIndex;
  embedder: Embedder;
}

const PREVIEW_CHARS = 200;
/** How many same-document chunks `neighbors(id, 'context_of')` lists, nearest first. */
const CONTEXT_FANOUT = 20;

/** Key of a chunk version inside the indexes: the segment name keeps replaced versions apart. */
export function chunkKey(segment: string, id: string): string {
  return `${segment}/${id}`;
}

function splitKey(key: string): { segment: string; id: string } {
  const slash = key.indexOf('/');
  return { segment: key.slice(0, slash), id: key.slice(slash + 1) };
}

export class ChunkGraph {
  private state: GraphState;
  private readonly metas = new Map<string, SegmentMeta>();
  private readonly texts = new Map<string, string[]>();
  private bm25: Bm25Index | undefined;
  /** Segments in the BM25 index, which may run ahead of the committed state during an ingest. */
  private readonly indexed = new Set<string>();
  private related: Map<string, Link[]> | undefined;
  /** Live related_to links; -1 until counted for the current state. */
  private relatedCount = -1;
  private grepRunner: GrepRunner | undefined;
  vectors: VectorSearch | undefined;

  private readonly source: SegmentSource;
  private readonly onTouch: (ids: string[]) => void;

  constructor(source: SegmentSource, state: GraphState, onTouch: (ids: string[]) => void = () => {}) {
    this.source = source;
    this.onTouch = onTouch;
    this.state = state;
  }

  get generation(): number {
    return this.state.generation;
  }

  get segments(): readonly string[] {
    return this.state.segments;
  }

  get manualLinks(): readonly Link[] {
    return this.state.manual;
  }

  /** Moves to a newer state; caches of segments that are still there are kept (segments never change). */
  update(state: GraphState): void {
    const keep = new Set(state.segments);
    for (const name of this.state.segments) {
      if (!keep.has(name)) {
        this.metas.delete(name);
        this.texts.delete(name);
      }
    }
    for (const name of this.indexed) {
      if (!keep.has(name)) {
        this.bm25?.removeSegment(name);
        this.indexed.delete(name);
      }
    }
    if (this.bm25) for (const name of state.segments) this.addToIndex(this.bm25, name);
    this.state = state;
    this.related = undefined;
    this.relatedCount = -1;
  }

  documents(): DocumentRecord[] {
    return [...this.state.documents.values()];
  }

  document(id: string): DocumentRecord | undefined {
    return this.state.documents.get(id);
  }

  stats(): StoreStats {
    let chunks = 0;
    let tokens = 0;
    let bytes = 0;
    for (const d of this.state.documents.values()) {
      chunks += d.chunks;
      tokens += d.tokens;
      bytes += d.bytes;
    }
    // follows links are one per consecutive pair; context_of is membership (not counted as pairs).
    let links = this.state.manual.length + this.countRelated();
    for (const d of this.state.documents.values()) links += Math.max(0, d.chunks - 1);
    return { documents: this.state.documents.size, chunks, links, tokens, bytes, schema: 1 };
  }

  private meta(segment: string): SegmentMeta {
    let m = this.metas.get(segment);
    if (!m) {
      m = this.source.meta(segment);
      this.metas.set(segment, m);
    }
    return m;
  }

  private segmentTexts(segment: string): string[] {
    let t = this.texts.get(segment);
    if (!t) {
      t = this.source.texts(segment, this.meta(segment));
      this.texts.set(segment, t);
    }
    return t;
  }

  /** Position of a live chunk: its segment and index there. */
  private locate(id: string): { segment: string; idx: number; doc: DocumentRecord } | undefined {
    const parsed = parseChunkId(id);
    if (!parsed) return undefined;
    const doc = this.state.documents.get(parsed.document);
    if (!doc || parsed.ordinal >= doc.chunks) return undefined;
    return { segment: doc.segment, idx: doc.first + parsed.ordinal, doc };
  }

  private isLiveKey(segment: string, id: string): boolean {
    const parsed = parseChunkId(id);
    if (!parsed) return false;
    const doc = this.state.documents.get(parsed.document);
    return doc !== undefined && doc.segment === segment && parsed.ordinal < doc.chunks;
  }

  getChunk(id: string): ChunkRecord | undefined {
    const at = this.locate(id);
    if (!at) return undefined;
    const meta = this.meta(at.segment);
    return recordAt(meta, at.idx, docIndexOf(meta, at.idx), this.segmentTexts(at.segment)[at.idx] ?? '');
  }

  documentChunks(documentId: string): ChunkRecord[] {
    const doc = this.state.documents.get(documentId);
    if (!doc) return [];
    const out: ChunkRecord[] = [];
    for (let i = 0; i < doc.chunks; i++) {
      const c = this.getChunk(`${doc.id}:${i}`);
      if (c) out.push(c);
    }
    return out;
  }

  /** Every live chunk as `{segment, id, text}`, in store order (for grep and repair). */
  *liveChunks(): Generator<{ segment: string; id: string; idx: number; text: string }> {
    for (const doc of [...this.state.documents.values()].sort(byPath)) {
      if (doc.chunks === 0) continue;
      const texts = this.segmentTexts(doc.segment);
      for (let i = 0; i < doc.chunks; i++) {
        yield {
          segment: doc.segment,
          id: `${doc.id}:${i}`,
          idx: doc.first + i,
          text: texts[doc.first + i] ?? '',
        };
      }
    }
  }

  /**
   * The number of live related_to links, without building {@link relatedLinks}' map: an ingest reports
   * the count at its end, where that map (an object per link) would raise the peak memory for nothing.
   */
  private countRelated(): number {
    if (this.relatedCount < 0) {
      let count = 0;
      for (const segment of this.state.segments) {
        for (const [from, to, toSegment] of this.source.links(segment).related)
          if (this.isLiveKey(segment, from) && this.isLiveKey(toSegment, to)) count++;
      }
      this.relatedCount = count;
    }
    return this.relatedCount;
  }

  private relatedLinks(): Map<string, Link[]> {
    if (this.related) return this.related;
    const map = new Map<string, Link[]>();
    let count = 0;
    const add = (key: string, link: Link) => {
      const list = map.get(key);
      if (list) list.push(link);
      else map.set(key, [link]);
    };
    for (const segment of this.state.segments) {
      for (const [from, to, toSegment, strength] of this.source.links(segment).related) {
        if (!this.isLiveKey(segment, from) || !this.isLiveKey(toSegment, to)) continue;
        const link: Link = { from, to, type: 'related_to', strength };
        add(from, link);
        add(to, link);
        count++;
      }
    }
    this.related = map;
    this.relatedCount = count;
    return map;
  }

  neighbors(id: string, type?: LinkType): Link[] {
    const at = this.locate(id);
    if (!at) throw new RlmError('NOT_FOUND', `no chunk with id ${id}`);
    const out: Link[] = [];
    const want = (t: LinkType) => type === undefined || type === t;
    const { doc } = at;
    const ordinal = at.idx - doc.first;
    if (want('follows')) {
      if (ordinal > 0) out.push({ from: id, to: `${doc.id}:${ordinal - 1}`, type: 'follows', strength: 1 });
      if (ordinal + 1 < doc.chunks)
        out.push({ from: `${doc.id}:${ordinal + 1}`, to: id, type: 'follows', strength: 1 });
    }
    if (want('context_of')) {
      for (let d = 1, n = 0; n < CONTEXT_FANOUT && (ordinal - d >= 0 || ordinal + d < doc.chunks); d++) {
        for (const o of [ordinal - d, ordinal + d]) {
          if (o >= 0 && o < doc.chunks && n < CONTEXT_FANOUT) {
            out.push({ from: id, to: `${doc.id}:${o}`, type: 'context_of', strength: 1 / (1 + d / 10) });
            n++;
          }
        }
      }
    }
    if (want('related_to')) out.push(...(this.relatedLinks().get(id) ?? []));
    for (const link of this.state.manual) {
      if ((link.from === id || link.to === id) && want(link.type)) out.push(link);
    }
    return out;
  }

  private index(): Bm25Index {
    if (!this.bm25) {
      const index = new Bm25Index();
      for (const name of this.state.segments) this.addToIndex(index, name);
      this.bm25 = index;
    }
    return this.bm25;
  }

  private addToIndex(index: Bm25Index, name: string, seg?: Bm25Segment): void {
    if (this.indexed.has(name)) return;
    index.addSegment(name, seg ?? this.source.bm25(name));
    this.indexed.add(name);
  }

  /**
   * The BM25 index including a segment that is being written (not yet committed), so the linker sees
   * document frequencies with the new chunks counted. Its chunks stay invisible to search until the
   * commit makes their documents point at the segment.
   */
  indexWith(name: string, seg: Bm25Segment): Bm25Index {
    const index = this.index();
    this.addToIndex(index, name, seg);
    return index;
  }

  /** Loads the search index now (store open stays cheap; this is the first search's cost). */
  warm(): void {
    this.index();
  }

  async search(query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    const k = opts.k ?? 10;
    if (!Number.isInteger(k) || k < 1)
      throw new RlmError('BAD_INPUT', `k must be a positive integer, got ${k}`);
    const docs = toSet(opts.document);
    const wanted = toSet(opts.type);
    // `memory` is not a chunk type but a kind of document: it keeps memories, the rest filter chunks.
    const memoriesOnly = wanted?.delete('memory') === true;
    const types = wanted && wanted.size > 0 ? wanted : undefined;
    const tags = opts.tags && opts.tags.length > 0 ? opts.tags : undefined;
    const filter = (key: string): boolean => {
      const { segment, id } = splitKey(key);
      if (!this.isLiveKey(segment, id)) return false;
      const parsed = parseChunkId(id)!;
      if (docs && !docs.has(parsed.document)) return false;
      const doc = this.state.documents.get(parsed.document)!;
      if (doc.memory?.archivedAt !== undefined && opts.archived !== true) return false;
      if ((memoriesOnly || opts.topic !== undefined) && !doc.memory) return false;
      if (opts.topic !== undefined && doc.memory?.topic !== opts.topic) return false;
      if (opts.where && !opts.where(doc)) return false;
      if (!types && !tags) return true;
      const meta = this.meta(segment);
      const idx = doc.first + parsed.ordinal;
      if (types && !types.has(typeNameOf(meta, idx))) return false;
      if (tags) {
        const have = new Set(meta.tags[idx]!.map((t) => meta.tagTable[t]));
        if (!tags.every((t) => have.has(t))) return false;
      }
      return true;
    };
    const mode = opts.mode ?? (this.vectors ? 'hybrid' : 'bm25');
    if (mode !== 'bm25' && !this.vectors) {
      throw new RlmError(
        'BAD_INPUT',
        `search mode ${mode} needs an embedder; ingest with --embedder to set one`,
      );
    }
    const depth = mode === 'hybrid' ? Math.max(k * 4, 50) : k;
    let ranked: { id: string; score: number }[] = [];
    if (mode !== 'vector') {
      ranked = this.index().search(query, { k: depth, filter, fuzzy: opts.fuzzy ?? true });
    }
    if (mode !== 'bm25' && this.vectors) {
      let vector: ArrayLike<number> | undefined;
      try {
        [vector] = await this.vectors.embedder.embed([query]);
      } catch (err) {
        // Hybrid search degrades to BM25 with a dead embedder; asking for vectors only is an error.
        if (mode === 'vector' || isRlmError(err, 'ABORTED')) throw err;
        opts.onWarning?.(
          `the embedder ${this.vectors.embedder.name} failed (${(err as Error).message}); results are BM25 only`,
        );
      }
      if (vector !== undefined) {
        const hits = await this.vectors.index.query(Array.from(vector), depth, filter);
        ranked = mode === 'vector' ? hits : reciprocalRankFusion([ranked, hits]);
      }
    }
    const out: SearchHit[] = [];
    for (const hit of ranked.slice(0, k)) {
      const { segment, id } = splitKey(hit.id);
      const parsed = parseChunkId(id)!;
      const doc = this.state.documents.get(parsed.document)!;
      const idx = doc.first + parsed.ordinal;
      const meta = this.meta(segment);
      const text = this.segmentTexts(segment)[idx] ?? '';
      out.push({
        id,
        score: hit.score,
        preview: passage(text, query, PREVIEW_CHARS),
        document: parsed.document,
        path: doc.path,
        tokens: meta.tokens[idx]!,
        tags: meta.tags[idx]!.map((t) => meta.tagTable[t]!),
        type: typeNameOf(meta, idx),
      });
    }
    if (opts.touch !== false) this.onTouch(out.map((h) => h.id));
    return out;
  }

  /**
   * The documents a grep's `document` option names: ids, or paths a document was ingested from (every
   * part of a big file). A name that matches nothing is refused: a typo must not read as "no matches".
   */
  private namedDocuments(names: Set<string> | undefined): Set<string> | undefined {
    if (!names) return undefined;
    const out = new Set<string>();
    let byPath: Map<string, string[]> | undefined;
    for (const name of names) {
      if (this.state.documents.has(name)) {
        out.add(name);
        continue;
      }
      if (!byPath) {
        byPath = new Map();
        for (const d of this.state.documents.values()) {
          if (d.path === null) continue;
          const list = byPath.get(d.path);
          if (list) list.push(d.id);
          else byPath.set(d.path, [d.id]);
        }
      }
      const ids = byPath.get(name) ?? byPath.get(resolve(name));
      if (!ids) {
        throw new RlmError(
          'BAD_INPUT',
          `grep: no document ${JSON.stringify(name)} in the store; give a document id or the path it was ingested from`,
        );
      }
      for (const id of ids) out.add(id);
    }
    return out;
  }

  /**
   * Chunk offsets a grep needs for a document: only where its chunks are not its text back to back
   * (`size` overlaps them, `turn` renders JSONL), so other segments' meta files are not read for it.
   */
  private offsetsFor(doc: DocumentRecord): { starts: number[]; ends: number[] } | undefined {
    if (doc.chunker !== 'size' && doc.chunker !== 'turn') return undefined;
    const meta = this.meta(doc.segment);
    return {
      starts: meta.start.slice(doc.first, doc.first + doc.chunks),
      ends: meta.end.slice(doc.first, doc.first + doc.chunks),
    };
  }

  async grep(pattern: string, opts: GrepOptions = {}): Promise<GrepResult> {
    const docs = this.namedDocuments(toSet(opts.document));
    const inFiles = this.state.segments.some((s) => this.source.filePaths?.(s));
    // Decided by where segments live, not by whether there are any yet: the runner keeps its worker.
    this.grepRunner ??= new GrepRunner(
      [],
      this.source.filePaths ? { workerYoungMb: FILE_GREP_YOUNG_MB } : {},
    );
    const { document: _named, ...rest } = opts;
    if (!inFiles) {
      // A store held in memory: the worker keeps a copy of the corpus between greps (the `document`
      // filter applies there, so one copy serves every filter).
      const chunks: GrepChunk[] = [];
      for (const doc of this.sortedDocuments()) {
        const texts = this.segmentTexts(doc.segment);
        const offsets = this.offsetsFor(doc);
        for (let i = 0; i < doc.chunks; i++) chunks.push(grepChunk(doc, i, texts, offsets));
      }
      const filter = docs ? { ...rest, document: [...docs] } : rest;
      return this.grepRunner.grep({ version: this.state.generation, chunks }, pattern, filter);
    }
    // Segments in files are read, scanned and dropped one at a time in the worker, so memory stays at one
    // segment whatever the store's size; only the memories not yet folded (in memory) travel inline.
    const order = this.sortedDocuments().filter((d) => !docs || docs.has(d.id));
    const bySegment = new Map<string, DocumentRecord[]>();
    for (const d of order) {
      const list = bySegment.get(d.segment);
      if (list) list.push(d);
      else bySegment.set(d.segment, [d]);
    }
    const segments: GrepSegment[] = [];
    for (const s of this.state.segments) {
      const live = bySegment.get(s);
      if (!live) continue;
      const files = this.source.filePaths?.(s);
      segments.push(
        files
          ? { segment: s, ...files, runs: live.map((d) => this.grepRun(d)) }
          : { documents: live.map((d) => d.id), inline: this.liveChunksOf(s, live) },
      );
    }
    return this.grepRunner.grepSegments(
      segments,
      order.map((d) => d.id),
      pattern,
      rest,
    );
  }

  /** Live documents with chunks, in store order (path, then id). */
  private sortedDocuments(): DocumentRecord[] {
    return [...this.state.documents.values()].filter((d) => d.chunks > 0).sort(byPath);
  }

  private grepRun(doc: DocumentRecord): GrepRun {
    const run: GrepRun = { id: doc.id, first: doc.first, count: doc.chunks };
    const offsets = this.offsetsFor(doc);
    if (offsets) {
      run.starts = offsets.starts;
      run.ends = offsets.ends;
    }
    return run;
  }

  /** The live chunks of `documents` in an in-memory segment, as grep needs them. */
  private liveChunksOf(segment: string, documents: DocumentRecord[]): GrepChunk[] {
    const texts = this.segmentTexts(segment);
    const out: GrepChunk[] = [];
    for (const doc of documents) {
      const offsets = this.offsetsFor(doc);
      for (let i = 0; i < doc.chunks; i++) out.push(grepChunk(doc, i, texts, offsets));
    }
    return out;
  }

  close(): void {
    this.grepRunner?.close();
    this.grepRunner = undefined;
  }
}

/** Chunk `i` of `doc` as grep reads it. */
function grepChunk(
  doc: DocumentRecord,
  i: number,
  texts: string[],
  offsets: { starts: number[]; ends: number[] } | undefined,
): GrepChunk {
  const chunk: GrepChunk = { id: `${doc.id}:${i}`, text: texts[doc.first + i] ?? '', document: doc.id };
  const start = offsets?.starts[i];
  const end = offsets?.ends[i];
  if (start !== undefined && end !== undefined) {
    chunk.start = start;
    chunk.end = end;
  }
  return chunk;
}

function typeNameOf(meta: SegmentMeta, idx: number): ChunkType {
  return CHUNK_TYPES[meta.type[idx]!] ?? 'text';
}

function toSet<T extends string>(v: T | T[] | undefined): Set<T> | undefined {
  if (v === undefined) return undefined;
  const list = Array.isArray(v) ? v : [v];
  return list.length > 0 ? new Set(list) : undefined;
}

function byPath(a: DocumentRecord, b: DocumentRecord): number {
  return (a.path ?? a.id).localeCompare(b.path ?? b.id);
}
