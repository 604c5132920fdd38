/**
 * Deleting for good. Dropping a document from the documents file makes it invisible at once, but its
 * text would stay on disk in every segment it shares with documents that stay (and in older versions of
 * it kept beside live documents), where a `grep -r` of the store finds it and a repair that rebuilds the
 * documents file from chunk files brings it back. So a delete rewrites those segments without it: each
 * one gets a new name (segments are immutable by name; readers cache them) holding the live chunks only,
 * with their BM25 index, signatures and related_to links carried over, in the delete's own commit.
 */
import { buildSegment } from '../search/bm25.ts';
import type { ChunkRecord, DocumentRecord } from '../types.ts';
import { chunkKey, type SegmentSource } from './graph.ts';
import type { SegmentFiles } from './persistence.ts';
import {
  buildMeta,
  docIndexOf,
  parseChunkId,
  recordAt,
  SEGMENT_VERSION,
  type SegmentLinks,
  segmentName,
} from './segment.ts';

/** What a delete writes besides the documents file. */
export interface Purge {
  /** New segment files by name, to write before the commit. */
  files: Map<string, SegmentFiles>;
  /** Old segment name → the name of its rewrite. */
  renamed: Map<string, string>;
  /** Vector keys of chunks that moved: [old, new]. */
  moved: [string, string][];
  nextSegment: number;
}

/**
 * Plans the rewrite of every segment (of `segments`) that holds a chunk of a `deleted` document and also
 * live chunks of others. `after` is the documents map without the deleted ones: the records of documents
 * that move are replaced in it (new segment, new first index).
 */
export function purgeSegments(
  source: SegmentSource,
  segments: readonly string[],
  deleted: ReadonlySet<string>,
  after: Map<string, DocumentRecord>,
  nextSegment: number,
): Purge {
  const liveIn = new Map<string, DocumentRecord[]>();
  for (const d of after.values()) {
    const list = liveIn.get(d.segment);
    if (list) list.push(d);
    else liveIn.set(d.segment, [d]);
  }
  // Live segments holding any version of a deleted document (a replaced one stays until compacted).
  const targets = segments.filter(
    (s) => liveIn.has(s) && source.meta(s).docs.some((run) => deleted.has(run.id)),
  );
  const purge: Purge = { files: new Map(), renamed: new Map(), moved: [], nextSegment };
  if (targets.length === 0) return purge;
  for (const s of targets) purge.renamed.set(s, segmentName(purge.nextSegment++));

  const live = (segment: string, id: string): boolean => {
    const parsed = parseChunkId(id);
    if (!parsed) return false;
    const doc = after.get(parsed.document);
    return doc !== undefined && doc.segment === segment && parsed.ordinal < doc.chunks;
  };
  // related_to links of the chunks that move: their own, and those pointing at them from other
  // segments, turned around (the relation is symmetric) since those segments are not rewritten.
  const related = new Map<string, SegmentLinks['related']>([...purge.renamed.values()].map((n) => [n, []]));
  for (const s of segments) {
    const into = purge.renamed.get(s);
    for (const [from, to, toSegment, strength] of source.links(s).related) {
      if (!live(s, from) || !live(toSegment, to)) continue;
      if (into) related.get(into)!.push([from, to, purge.renamed.get(toSegment) ?? toSegment, strength]);
      else {
        const target = purge.renamed.get(toSegment);
        if (target) related.get(target)!.push([to, from, s, strength]);
      }
    }
  }

  for (const s of targets) {
    const name = purge.renamed.get(s)!;
    const meta = source.meta(s);
    const texts = source.texts(s, meta);
    const signatures = source.links(s).signatures;
    const records: ChunkRecord[] = [];
    const signed: string[][] = [];
    const docs = liveIn.get(s)!.sort((a, b) => a.first - b.first);
    for (const doc of docs) {
      const first = records.length;
      for (let i = 0; i < doc.chunks; i++) {
        const idx = doc.first + i;
        records.push(recordAt(meta, idx, docIndexOf(meta, idx), texts[idx] ?? ''));
        signed.push(signatures[idx] ?? []);
        purge.moved.push([chunkKey(s, `${doc.id}:${i}`), chunkKey(name, `${doc.id}:${i}`)]);
      }
      after.set(doc.id, { ...doc, segment: name, first });
    }
    purge.files.set(name, {
      chunks: { version: SEGMENT_VERSION, segment: name, chunks: records },
      meta: buildMeta(name, meta.createdAt, records),
      bm25: buildSegment(records.map((r) => ({ id: chunkKey(name, r.id), text: r.text }))),
      links: { version: SEGMENT_VERSION, segment: name, related: related.get(name)!, signatures: signed },
    });
  }
  return purge;
}
