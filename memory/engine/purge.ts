/**
 * Deleting for good. Dropping a document from the documents file makes it invisible at once, but its
 * text would stay on disk in every segment it shares with documents that stay (and in older versions of
 * it kept beside live documents), where a `grep -r` of the store finds it and a repair that rebuilds the
 * documents file from chunk files brings it back. So a delete rewrites those segments without it: each
 * one gets a new name (segments are immutable by name; readers cache them) holding the live chunks only,
 * with their BM25 index, signatures and related_to links carried over, in the delete's own commit.
 */
import { buildTerms, type SegmentTerms } from '../search/segment.ts';
import type { ChunkRecord, DocumentRecord } from '../types.ts';
import type { DocumentMap } from './catalog.ts';
import { type SegmentFiles, segmentFiles } from './format-segment.ts';
import { chunkKey } from './graph.ts';
import type { OutEdge } from './links-file.ts';

/** A segment's links as written: edges out of its chunks, and each chunk's signature. */
export interface SegmentLinks {
  edges: OutEdge[];
  signatures: string[][];
}

import { parseChunkId, recordAt, type Segment, segmentName } from './segment.ts';

/** What a delete writes besides the documents file. */
export interface Purge {
  /** Old segment name → the name of its rewrite. */
  renamed: Map<string, string>;
  /** Vector keys of chunks that moved: [old, new]. */
  moved: [string, string][];
  nextSegment: number;
}

/**
 * Rewrites every segment (of `segments`) that holds a chunk of a `deleted` document and also live chunks
 * of others, writing each through `write` before the caller commits. `after` is the documents map without
 * the deleted ones: the records of documents that move are replaced in it (new segment, new first index).
 */
export async function purgeSegments(
  open: (name: string) => Segment,
  segments: readonly string[],
  deleted: ReadonlySet<string>,
  after: DocumentMap,
  nextSegment: number,
  write: (name: string, files: SegmentFiles) => Promise<void>,
): Promise<Purge> {
  // Live segments holding any version of a deleted document (a replaced one stays until compacted).
  const liveIn = liveDocuments(after);
  const targets = segments.filter(
    (s) =>
      liveIn.has(s) &&
      open(s)
        .columns()
        .docs.some((run) => deleted.has(run.id)),
  );
  const renamed = new Map<string, string>();
  for (const s of targets) renamed.set(s, segmentName(nextSegment++));
  const moved = await rewriteSegments(open, segments, renamed, after, write);
  return { renamed, moved, nextSegment };
}

/** The documents of `documents` by the segment holding them. */
export function liveDocuments(documents: Pick<DocumentMap, 'values'>): Map<string, DocumentRecord[]> {
  const liveIn = new Map<string, DocumentRecord[]>();
  for (const d of documents.values()) {
    const list = liveIn.get(d.segment);
    if (list) list.push(d);
    else liveIn.set(d.segment, [d]);
  }
  return liveIn;
}

/**
 * Writes the segments `renamed` names again under their new names, one at a time, with the chunks of the
 * documents `after` places in them, and moves those records in `after`; returns the vector keys that
 * moved. Several segments may get one new name: they are merged into it, in the order `renamed` lists
 * them. Links carried over: the moved chunks' own live links, and the live links other segments (those
 * not rewritten) hold into them, turned around (the relation is symmetric). Deletes, merges and repair
 * share it. `open` gives a segment whose columns and texts the documents' records (`first`, `chunks`)
 * describe.
 */
export async function rewriteSegments(
  open: (name: string) => Segment,
  segments: readonly string[],
  renamed: ReadonlyMap<string, string>,
  after: DocumentMap,
  write: (name: string, files: SegmentFiles) => Promise<void>,
  /**
   * Links computed anew for a segment whose own links were lost (repair), added to those carried over;
   * undefined keeps what the segment had.
   */
  relink?: (name: string, records: ChunkRecord[], terms: SegmentTerms) => SegmentLinks | undefined,
): Promise<[string, string][]> {
  const before = new Map(after);
  const liveIn = liveDocuments(before);
  const live = (segment: string, id: string): boolean => {
    const parsed = parseChunkId(id);
    if (!parsed) return false;
    const doc = before.get(parsed.document);
    return doc !== undefined && doc.segment === segment && parsed.ordinal < doc.chunks;
  };
  // New places first, so links between two moved chunks point at the right position.
  const plans = new Map<string, { froms: string[]; docs: DocumentRecord[] }>();
  for (const [from, name] of renamed) {
    const plan = plans.get(name) ?? { froms: [], docs: [] };
    plans.set(name, plan);
    plan.froms.push(from);
    let first = plan.docs.reduce((n, d) => n + d.chunks, 0);
    for (const doc of [...(liveIn.get(from) ?? [])].sort((a, b) => a.first - b.first)) {
      after.set(doc.id, { ...doc, segment: name, first });
      first += doc.chunks;
      plan.docs.push(doc);
    }
  }
  const place = (id: string): { segment: string; idx: number } | undefined => {
    const parsed = parseChunkId(id);
    const doc = parsed && after.get(parsed.document);
    return doc && parsed.ordinal < doc.chunks
      ? { segment: doc.segment, idx: doc.first + parsed.ordinal }
      : undefined;
  };
  const kept = segments.filter((s) => !renamed.has(s));
  const moved: [string, string][] = [];
  for (const [name, { froms, docs }] of plans) {
    const edges: OutEdge[] = [];
    const add = (a: string, b: string, strength: number) => {
      const p = place(a);
      const q = place(b);
      if (p && q && p.segment === name)
        edges.push({ fromIdx: p.idx, to: b, toSegment: q.segment, toIdx: q.idx, strength });
    };
    for (const doc of docs) {
      const old = before.get(doc.id)!;
      const links = open(old.segment).links();
      for (let i = 0; i < doc.chunks; i++) {
        const id = `${doc.id}:${i}`;
        for (const e of links.from(old.first + i)) if (live(e.toSegment, e.to)) add(id, e.to, e.strength);
      }
    }
    // Links into moved chunks from segments that stay as they are.
    for (const s of kept) {
      const theirs = open(s).links();
      for (const from of froms) {
        if (!theirs.linksInto(from)) continue;
        for (const doc of docs) {
          const old = before.get(doc.id)!;
          if (old.segment !== from) continue;
          for (let i = 0; i < doc.chunks; i++) {
            const id = `${doc.id}:${i}`;
            for (const e of theirs.into(from, old.first + i, id))
              if (live(s, e.from)) add(id, e.from, e.strength);
          }
        }
      }
    }
    const records: ChunkRecord[] = [];
    const signed: string[][] = [];
    for (const doc of docs) {
      const old = before.get(doc.id)!;
      const seg = open(old.segment);
      const columns = seg.columns();
      const signatures = seg.links().signatures();
      const texts = seg.texts(old.first, old.first + doc.chunks);
      for (let i = 0; i < doc.chunks; i++) {
        records.push(recordAt(columns, old.first + i, texts[i]!));
        signed.push(signatures[old.first + i] ?? []);
        moved.push([chunkKey(old.segment, `${doc.id}:${i}`), chunkKey(name, `${doc.id}:${i}`)]);
      }
    }
    const terms = buildTerms(records.map((r) => r.text));
    const anew = relink?.(name, records, terms);
    const files = segmentFiles(name, open(froms[0]!).columns().createdAt, records, terms, {
      edges: anew ? [...edges, ...anew.edges] : edges,
      signatures: anew ? anew.signatures : signed,
    });
    await write(name, files);
  }
  return moved;
}
