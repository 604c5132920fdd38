/**
 * The read model of a chunk graph: documents, segments and the indexes over them, loaded lazily from a
 * {@link SegmentSource}. Both the directory store and the in-memory store answer reads through it, so
 * search, grep and links behave the same whichever holds the data.
 */

import { resolve } from 'node:path';
import { isRlmError, RlmError } from '../../core/errors.ts';
import { lastAtMost } from '../../core/last-at-most.ts';
import { compareDocumentIds, isPart, type PartLink, partLinks, positionLinks } from '../graph-rules.ts';
import {
  FILE_GREP_YOUNG_MB,
  type GrepChunk,
  type GrepRun,
  GrepRunner,
  type GrepSegment,
} from '../grep/grep.ts';
import { Bm25Index } from '../search/bm25.ts';
import type { Embedder } from '../search/embedders/types.ts';
import { reciprocalRankFusion } from '../search/fusion.ts';
import { passage } from '../search/passage.ts';
import type { VectorIndex } from '../search/vectors.ts';
import type {
  ChunkRecord,
  DocumentRecord,
  GrepOptions,
  GrepResult,
  Link,
  LinkType,
  SearchHit,
  SearchOptions,
  StoreStats,
} from '../types.ts';
import type { DocumentCatalog } from './catalog.ts';
import { parseChunkId, recordAt, type Segment } from './segment.ts';

/** Where segments come from: the store folder, or memory. Reads are synchronous; the graph caches segments. */
export interface SegmentSource {
  /** The segment of this name, unopened (its parts load on first use). */
  segment(name: string): Segment;
}

export interface GraphState {
  documents: DocumentCatalog;
  segments: string[];
  /** supports / contradicts links set by hand. */
  manual: Link[];
  generation: number;
  /** Live related_to links, when the state knows their number (schema 3 keeps it); counted otherwise. */
  related?: number | undefined;
}

export interface VectorSearch {
  index: VectorIndex;
  embedder: Embedder;
}

const PREVIEW_CHARS = 200;

/** Key of a chunk version inside the indexes: the segment name keeps replaced versions apart. */
export function chunkKey(segment: string, id: string): string {
  return `${segment}/${id}`;
}

function splitKey(key: string): { segment: string; id: string } {
  const slash = key.indexOf('/');
  return { segment: key.slice(0, slash), id: key.slice(slash + 1) };
}

/** The live documents of one segment, by the position of their first chunk there. */
interface LiveRuns {
  firsts: number[];
  docs: DocumentRecord[];
}

export class ChunkGraph {
  private state: GraphState;
  private readonly opened = new Map<string, Segment>();
  private bm25: Bm25Index | undefined;
  /** Live documents per segment, built for the current state on first need. */
  private live: Map<string, LiveRuns> | undefined;
  /** Live related_to links counted for the current state (stores that do not keep the number); -1: not yet. */
  private relatedCount = -1;
  private grepRunner: GrepRunner | undefined;
  vectors: VectorSearch | undefined;

  private readonly source: SegmentSource;
  private readonly onTouch: (ids: string[]) => void;

  /** Whether segments live in files: grep then tunes its worker for reading them. */
  private readonly filesBacked: boolean;

  constructor(
    source: SegmentSource,
    state: GraphState,
    onTouch: (ids: string[]) => void = () => {},
    opts: { filesBacked?: boolean } = {},
  ) {
    this.source = source;
    this.onTouch = onTouch;
    this.state = state;
    this.filesBacked = opts.filesBacked === true;
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

  /** Moves to a newer state; segments that are still there stay open (segments never change). */
  update(state: GraphState): void {
    const keep = new Set(state.segments);
    for (const [name, seg] of this.opened) {
      if (keep.has(name)) continue;
      seg.close();
      this.opened.delete(name);
      this.bm25?.removeSegment(name);
    }
    this.state = state;
    if (this.bm25) for (const name of state.segments) this.addToIndex(this.bm25, name);
    this.live = undefined;
    this.relatedCount = -1;
  }

  documents(): DocumentRecord[] {
    return [...this.state.documents.values()];
  }

  document(id: string): DocumentRecord | undefined {
    return this.state.documents.get(id);
  }

  /** The segment of this name, opened once. */
  segment(name: string): Segment {
    let seg = this.opened.get(name);
    if (!seg) {
      seg = this.source.segment(name);
      this.opened.set(name, seg);
    }
    return seg;
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

  /** Position of a live chunk: its segment and index there. */
  private locate(
    id: string,
  ): { segment: string; idx: number; document: string; first: number; chunks: number } | undefined {
    const parsed = parseChunkId(id);
    if (!parsed) return undefined;
    // The place only: a record is decoded from the catalog's bytes when it is read whole.
    const at = this.state.documents.place(parsed.document);
    if (!at || parsed.ordinal >= at.chunks) return undefined;
    return {
      segment: at.segment,
      idx: at.first + parsed.ordinal,
      document: parsed.document,
      first: at.first,
      chunks: at.chunks,
    };
  }

  private isLiveKey(segment: string, id: string): boolean {
    const parsed = parseChunkId(id);
    if (!parsed) return false;
    const at = this.state.documents.place(parsed.document);
    return at !== undefined && at.segment === segment && parsed.ordinal < at.chunks;
  }

  /** The live document whose chunks hold position `idx` of `segment`, if any. */
  private liveAt(segment: string, idx: number): DocumentRecord | undefined {
    if (!this.live) {
      const live = new Map<string, LiveRuns>();
      const sorted = [...this.state.documents.values()]
        .filter((d) => d.chunks > 0)
        .sort((a, b) => a.first - b.first);
      for (const d of sorted) {
        let runs = live.get(d.segment);
        if (!runs) {
          runs = { firsts: [], docs: [] };
          live.set(d.segment, runs);
        }
        runs.firsts.push(d.first);
        runs.docs.push(d);
      }
      this.live = live;
    }
    const runs = this.live.get(segment);
    if (!runs) return undefined;
    if (runs.firsts.length === 0 || runs.firsts[0]! > idx) return undefined;
    const doc = runs.docs[lastAtMost(runs.firsts, idx)]!;
    return idx < doc.first + doc.chunks ? doc : undefined;
  }

  getChunk(id: string): ChunkRecord | undefined {
    const at = this.locate(id);
    if (!at) return undefined;
    const seg = this.segment(at.segment);
    return recordAt(seg.columns(), at.idx, seg.text(at.idx));
  }

  documentChunks(documentId: string): ChunkRecord[] {
    const doc = this.state.documents.get(documentId);
    if (!doc || doc.chunks === 0) return [];
    const seg = this.segment(doc.segment);
    const columns = seg.columns();
    return seg
      .texts(doc.first, doc.first + doc.chunks)
      .map((text, i) => recordAt(columns, doc.first + i, text));
  }

  /**
   * The number of live related_to links: kept by the state of a schema 3 store, counted over every
   * segment's links for older stores (once per state).
   */
  countRelated(): number {
    if (this.state.related !== undefined) return this.state.related;
    if (this.relatedCount < 0) {
      let count = 0;
      for (const segment of this.state.segments) {
        for (const e of this.segment(segment).links().all())
          if (this.liveAt(segment, e.fromIdx) && this.isLiveKey(e.toSegment, e.to)) count++;
      }
      this.relatedCount = count;
    }
    return this.relatedCount;
  }

  /**
   * The live related_to links that touch a chunk of `docs` (records as the current state has them), each
   * once: what a commit that removes or replaces those documents takes from the count.
   */
  liveLinksTouching(docs: readonly DocumentRecord[]): number {
    const dying = new Map<string, Set<number>>();
    for (const d of docs) {
      if (d.chunks === 0 || this.state.documents.segmentOf(d.id) !== d.segment) continue;
      let set = dying.get(d.segment);
      if (!set) {
        set = new Set();
        dying.set(d.segment, set);
      }
      for (let i = 0; i < d.chunks; i++) set.add(d.first + i);
    }
    if (dying.size === 0) return 0;
    const seen = new Set<string>();
    for (const [segment, positions] of dying) {
      const links = this.segment(segment).links();
      for (const idx of positions) {
        for (const e of links.from(idx))
          if (this.isLiveKey(e.toSegment, e.to)) seen.add(`${segment}/${idx}>${e.toSegment}/${e.to}`);
      }
      for (const other of this.state.segments) {
        const theirs = this.segment(other).links();
        if (!theirs.linksInto(segment)) continue;
        for (const idx of positions) {
          const doc = this.liveAt(segment, idx);
          if (!doc) continue;
          const id = `${doc.id}:${idx - doc.first}`;
          for (const e of theirs.into(segment, idx, id)) {
            const from = this.locate(e.from);
            if (from?.segment === other) seen.add(`${other}/${from.idx}>${segment}/${id}`);
          }
        }
      }
    }
    return seen.size;
  }

  neighbors(id: string, type?: LinkType): Link[] {
    const at = this.locate(id);
    if (!at) throw new RlmError('NOT_FOUND', `no chunk with id ${id}`);
    const ordinal = at.idx - at.first;
    const out = positionLinks(at.document, ordinal, at.chunks, type);
    const want = (t: LinkType) => type === undefined || type === t;
    if (want('related_to')) out.push(...this.relatedOf(id, at.segment, at.idx));
    for (const link of this.state.manual) {
      if ((link.from === id || link.to === id) && want(link.type)) out.push(link);
    }
    return out;
  }

  /**
   * The live related_to links of one chunk: those stored with it (out of it) and those the segments
   * holding links into its segment store (into it), in segment order and, within a segment, by the
   * position of the chunk they leave.
   */
  private relatedOf(id: string, segment: string, idx: number): Link[] {
    const out: Link[] = [];
    for (const name of this.state.segments) {
      const links = this.segment(name).links();
      const found: { from: number; link: Link }[] = [];
      if (name === segment) {
        for (const e of links.from(idx)) {
          if (this.isLiveKey(e.toSegment, e.to))
            found.push({ from: idx, link: { from: id, to: e.to, type: 'related_to', strength: e.strength } });
        }
      }
      if (links.linksInto(segment)) {
        for (const e of links.into(segment, idx, id)) {
          const from = this.locate(e.from);
          if (from?.segment === name)
            found.push({
              from: from.idx,
              link: { from: e.from, to: id, type: 'related_to', strength: e.strength },
            });
        }
      }
      found.sort((a, b) => a.from - b.from);
      for (const f of found) out.push(f.link);
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

  private addToIndex(index: Bm25Index, name: string): void {
    if (index.has(name)) return;
    index.addSegment(name, this.segment(name).bm25());
  }

  /** Loads the search index now (store open stays cheap; this is the first search's cost). */
  warm(): void {
    this.index();
  }

  /** Whether chunk `idx` of `segment` (of live document `doc`) passes a search's filters. */
  private passes(doc: DocumentRecord, segment: string, idx: number, f: SearchFilter): boolean {
    if (f.docs && !f.docs.has(doc.id)) return false;
    if (doc.memory?.archivedAt !== undefined && f.opts.archived !== true) return false;
    if ((f.memoriesOnly || f.opts.topic !== undefined) && !doc.memory) return false;
    if (f.opts.topic !== undefined && doc.memory?.topic !== f.opts.topic) return false;
    if (f.opts.where && !f.opts.where(doc)) return false;
    if (!f.types && !f.tags) return true;
    const columns = this.segment(segment).columns();
    if (f.types && !f.types.has(columns.type(idx))) return false;
    if (f.tags) {
      const have = new Set(columns.tags(idx));
      if (!f.tags.every((t) => have.has(t))) return false;
    }
    return true;
  }

  async search(query: string, opts: SearchOptions = {}): Promise<SearchHit[]> {
    const k = opts.k ?? 10;
    if (!Number.isInteger(k) || k < 1)
      throw new RlmError('BAD_INPUT', `k must be a positive integer, got ${k}`);
    const wanted = toSet(opts.type);
    // `memory` is not a chunk type but a kind of document: it keeps memories, the rest filter chunks.
    const memoriesOnly = wanted?.delete('memory') === true;
    const f: SearchFilter = {
      opts,
      docs: toSet(opts.document),
      memoriesOnly,
      types: wanted && wanted.size > 0 ? wanted : undefined,
      tags: opts.tags && opts.tags.length > 0 ? opts.tags : undefined,
    };
    const byKey = (key: string): boolean => {
      const { segment, id } = splitKey(key);
      const at = this.locate(id);
      if (at === undefined || at.segment !== segment) return false;
      return this.passes(this.state.documents.get(at.document)!, segment, at.idx, f);
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
      const hits = this.index().searchChunks(query, {
        k: depth,
        fuzzy: opts.fuzzy ?? true,
        where: (segment, idx) => {
          const doc = this.liveAt(segment, idx);
          return doc !== undefined && this.passes(doc, segment, idx, f);
        },
      });
      ranked = hits.map((h) => {
        const doc = this.liveAt(h.segment, h.idx)!;
        return { id: chunkKey(h.segment, `${doc.id}:${h.idx - doc.first}`), score: h.score };
      });
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
        const hits = await this.vectors.index.query(Array.from(vector), depth, byKey);
        ranked = mode === 'vector' ? hits : reciprocalRankFusion([ranked, hits]);
      }
    }
    const out: SearchHit[] = [];
    for (const hit of ranked.slice(0, k)) {
      const { segment, id } = splitKey(hit.id);
      const parsed = parseChunkId(id)!;
      const doc = this.state.documents.get(parsed.document)!;
      const idx = doc.first + parsed.ordinal;
      const seg = this.segment(segment);
      const columns = seg.columns();
      out.push({
        id,
        score: hit.score,
        preview: passage(seg.text(idx), query, PREVIEW_CHARS),
        document: parsed.document,
        path: doc.path,
        tokens: columns.tokens(idx),
        tags: columns.tags(idx),
        type: columns.type(idx),
      });
    }
    if (opts.touch !== false) this.onTouch(out.map((h) => h.id));
    return out;
  }

  /**
   * The documents a grep's `document` option names: ids (a file's first part takes its other parts, as
   * readDocument does), or paths a document was ingested from (every part of a big file). A name that
   * matches nothing is refused: a typo must not read as "no matches".
   */
  private namedDocuments(names: Set<string> | undefined): Set<string> | undefined {
    if (!names) return undefined;
    const out = new Set<string>();
    let byPath: Map<string, string[]> | undefined;
    for (const name of names) {
      if (this.state.documents.has(name)) {
        out.add(name);
        if (!isPart(name))
          for (let n = 2; this.state.documents.has(`${name}.p${n}`); n++) out.add(`${name}.p${n}`);
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
   * (`size` overlaps them, `turn` renders JSONL), so other segments' headers are not read for it.
   */
  private offsetsFor(doc: DocumentRecord): { starts: number[]; ends: number[] } | undefined {
    if (doc.chunker !== 'size' && doc.chunker !== 'turn') return undefined;
    const columns = this.segment(doc.segment).columns();
    const starts: number[] = [];
    const ends: number[] = [];
    for (let i = doc.first; i < doc.first + doc.chunks; i++) {
      starts.push(columns.start(i));
      ends.push(columns.end(i));
    }
    return { starts, ends };
  }

  async grep(pattern: string, opts: GrepOptions = {}): Promise<GrepResult> {
    const docs = this.namedDocuments(toSet(opts.document));
    const inFiles = this.state.segments.some((s) => this.segment(s).paths !== undefined);
    // Decided by where segments live, not by whether there are any yet: the runner keeps its worker.
    this.grepRunner ??= new GrepRunner([], this.filesBacked ? { workerYoungMb: FILE_GREP_YOUNG_MB } : {});
    const { document: _named, ...rest } = opts;
    if (!inFiles) {
      // A store held in memory: the worker keeps a copy of the corpus between greps (the `document`
      // filter applies there, so one copy serves every filter).
      const chunks: GrepChunk[] = [];
      const all = this.sortedDocuments();
      const links = partLinks(all.map((d) => d.id));
      for (const doc of all) chunks.push(...this.grepChunks(doc, links.get(doc.id)));
      const filter = docs ? { ...rest, document: [...docs] } : rest;
      return this.grepRunner.grep({ version: this.state.generation, chunks }, pattern, filter);
    }
    // Segments in files are read, scanned and dropped one at a time in the worker, so memory stays at one
    // segment whatever the store's size; only the memories not yet folded (in memory) travel inline.
    const order = this.sortedDocuments().filter((d) => !docs || docs.has(d.id));
    const links = partLinks(order.map((d) => d.id));
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
      const paths = this.segment(s).paths;
      segments.push(
        paths
          ? { segment: s, ...paths, runs: live.map((d) => this.grepRun(d, links.get(d.id))) }
          : {
              documents: live.map((d) => d.id),
              inline: live.flatMap((d) => this.grepChunks(d, links.get(d.id))),
            },
      );
    }
    return this.grepRunner.grepSegments(
      segments,
      order.map((d) => d.id),
      pattern,
      rest,
    );
  }

  /** Live documents with chunks, in store order (path, then id; a file's parts in order). */
  private sortedDocuments(): DocumentRecord[] {
    return [...this.state.documents.values()]
      .filter((d) => d.chunks > 0)
      .sort((a, b) => byPath(a, b) || compareDocumentIds(a.id, b.id));
  }

  private grepRun(doc: DocumentRecord, link: PartLink = {}): GrepRun {
    const run: GrepRun = { id: doc.id, first: doc.first, count: doc.chunks, ...link };
    const offsets = this.offsetsFor(doc);
    if (offsets) {
      run.starts = offsets.starts;
      run.ends = offsets.ends;
    }
    return run;
  }

  /** The chunks of a document held in memory, as grep needs them (`link` on the first). */
  private grepChunks(doc: DocumentRecord, link: PartLink = {}): GrepChunk[] {
    const texts = this.segment(doc.segment).texts(doc.first, doc.first + doc.chunks);
    const offsets = this.offsetsFor(doc);
    return texts.map((text, i) => {
      const chunk: GrepChunk = { id: `${doc.id}:${i}`, text, document: doc.id, ...(i === 0 ? link : {}) };
      const start = offsets?.starts[i];
      const end = offsets?.ends[i];
      if (start !== undefined && end !== undefined) {
        chunk.start = start;
        chunk.end = end;
      }
      return chunk;
    });
  }

  close(): void {
    this.grepRunner?.close();
    this.grepRunner = undefined;
    for (const seg of this.opened.values()) seg.close();
    this.opened.clear();
  }
}

/** A search's filters, worked out once per search. */
interface SearchFilter {
  opts: SearchOptions;
  docs: Set<string> | undefined;
  memoriesOnly: boolean;
  types: Set<string> | undefined;
  tags: string[] | undefined;
}

function toSet<T extends string>(v: T | T[] | undefined): Set<T> | undefined {
  if (v === undefined) return undefined;
  const list = Array.isArray(v) ? v : [v];
  return list.length > 0 ? new Set(list) : undefined;
}

function byPath(a: DocumentRecord, b: DocumentRecord): number {
  return (a.path ?? a.id).localeCompare(b.path ?? b.id);
}
