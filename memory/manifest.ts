/**
 * The manifest `rlm-store.json` is the store's commit point: it names the live segments and the current
 * documents and links files. Everything it does not name is either older or not yet committed.
 */
import path from 'node:path';
import { RlmError } from '../src/errors.ts';
import { corrupt } from './fsutil.ts';
import type { DocumentRecord, Link, MemoryConfig } from './types.ts';

export const STORE_FORMAT = 'rlm-chunk-graph';
/** Newest schema this code reads and writes. A store without memories is still written as schema 1. */
export const SCHEMA_VERSION = 2;
/** Schema of a store that holds no memory configuration: readable by rlm versions before memories. */
export const BASE_SCHEMA_VERSION = 1;
export const MANIFEST_FILE = 'rlm-store.json';
export const SEGMENTS_DIR = 'segments';
export const VECTORS_DIR = 'vectors';

export interface Manifest {
  format: typeof STORE_FORMAT;
  schema: number;
  generation: number;
  createdAt: string;
  updatedAt: string;
  tokenizer: string;
  nextSegment: number;
  segments: string[];
  /** File names (in the store folder) of the current documents and manual-links files. */
  documents: string;
  links: string;
  embedder: { spec: string; dimensions: number } | null;
  /** Schema 2: memory settings and the journal of memories not yet folded into a segment. */
  memory?: MemoryConfig;
}

export interface DocumentsFile {
  version: number;
  documents: DocumentRecord[];
}

export interface LinksFile {
  version: number;
  links: Link[];
}

export function generationFile(kind: 'documents' | 'links', generation: number): string {
  return `${kind}-${String(generation).padStart(8, '0')}.json`;
}

export type SegmentPart = 'chunks' | 'meta' | 'bm25' | 'links';

export function segmentFile(dir: string, segment: string, part: SegmentPart): string {
  return path.join(dir, SEGMENTS_DIR, `${segment}.${part}.json`);
}

/** Validates a parsed manifest, or throws STORE_CORRUPT / BAD_INPUT naming the file. */
export function checkManifest(value: unknown, file: string): Manifest {
  const m = value as Partial<Manifest> | null;
  if (typeof m !== 'object' || m === null || m.format !== STORE_FORMAT) {
    throw corrupt(file, `not an rlm store manifest (format should be "${STORE_FORMAT}")`);
  }
  if (typeof m.schema !== 'number') throw corrupt(file, 'schema version missing');
  if (m.schema > SCHEMA_VERSION) {
    throw new RlmError(
      'BAD_INPUT',
      `store ${path.dirname(file)} has schema ${m.schema}, newer than this rlm understands (${SCHEMA_VERSION}); upgrade rlm`,
    );
  }
  const okString = (v: unknown) => typeof v === 'string' && v.length > 0;
  if (!Number.isInteger(m.generation) || !Number.isInteger(m.nextSegment))
    throw corrupt(file, 'generation or nextSegment missing');
  if (
    !Array.isArray(m.segments) ||
    !m.segments.every((s) => typeof s === 'string' && /^seg-\d{6,}$/.test(s))
  ) {
    throw corrupt(file, 'segments must be a list of segment names');
  }
  if (!okString(m.documents) || !okString(m.links))
    throw corrupt(file, 'documents or links file name missing');
  if (/[\\/]/.test(m.documents!) || /[\\/]/.test(m.links!))
    throw corrupt(file, 'file names must not contain a path');
  if (m.memory !== undefined) {
    const mem = m.memory as Partial<MemoryConfig> | null;
    if (
      typeof mem !== 'object' ||
      mem === null ||
      typeof mem.journal !== 'string' ||
      !/^memories-\d+\.jsonl$/.test(mem.journal) ||
      typeof mem.settings !== 'object'
    ) {
      throw corrupt(file, 'memory must be {journal: "memories-N.jsonl", settings}');
    }
  }
  return m as Manifest;
}

export function checkDocuments(value: unknown, file: string): DocumentsFile {
  const d = value as Partial<DocumentsFile> | null;
  if (typeof d !== 'object' || d === null || !Array.isArray(d.documents))
    throw corrupt(file, 'no documents array');
  for (const [i, doc] of d.documents.entries()) {
    const ok =
      typeof doc?.id === 'string' &&
      typeof doc.segment === 'string' &&
      Number.isInteger(doc.first) &&
      Number.isInteger(doc.chunks) &&
      typeof doc.hash === 'string';
    if (!ok) throw corrupt(file, `document ${i} lacks id, segment, first, chunks or hash`);
  }
  return d as DocumentsFile;
}

export function checkLinks(value: unknown, file: string): LinksFile {
  const l = value as Partial<LinksFile> | null;
  if (typeof l !== 'object' || l === null || !Array.isArray(l.links)) throw corrupt(file, 'no links array');
  for (const [i, link] of l.links.entries()) {
    if (
      typeof link?.from !== 'string' ||
      typeof link.to !== 'string' ||
      (link.type !== 'supports' && link.type !== 'contradicts' && link.type !== 'summarizes')
    ) {
      throw corrupt(file, `link ${i} is not {from, to, type: supports|contradicts|summarizes}`);
    }
  }
  return l as LinksFile;
}
