/**
 * The manifest `rlm-store.json` is the store's commit point: it names the live segments and the current
 * documents and links files. Everything it does not name is either older or not yet committed.
 */
import path from 'node:path';
import { RlmError } from '../../core/errors.ts';
import { corrupt } from '../fsutil.ts';
import {
  array,
  describeProblem,
  nullable,
  number,
  object,
  oneOf,
  optional,
  type Shape,
  string,
} from '../shape.ts';
import type { DocumentRecord, Link, MemoryConfig } from '../types.ts';

export const STORE_FORMAT = 'rlm-chunk-graph';
/**
 * The schema this code writes, and the newest it reads: 3 (binary segment files, counts in the manifest).
 * Schema 1 and 2 stores (JSON segment files) open as they are; their first commit by this code makes them
 * schema 3, new segments written as such, old ones listed in `legacy` until `rlm repair` rewrites them.
 */
export const SCHEMA_VERSION = 3;
/** The first schema with binary segment files; older stores' segments are all in the JSON format. */
export const BINARY_SCHEMA = 3;
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
  /** Schema 3: the number of live related_to links (stats read it here instead of every links file). */
  related?: number;
  /** Schema 3: live segments still in the schema 1/2 JSON format, until `rlm repair` rewrites them. */
  legacy?: string[];
  /** Schema 3: changes to apply over `documents`, oldest first (memory/files/documents-log.ts). */
  documentLog?: string[];
}

export interface DocumentsFile {
  version: number;
  documents: DocumentRecord[];
}

export interface LinksFile {
  version: number;
  links: Link[];
}

/** Whether `name` is one a store gives the files beside its manifest: documents, their log, links, the journal. */
export function isGenerationFile(name: string): boolean {
  // Eight digits or more, as rlm writes them: `links-2024.json` is someone else's file.
  return /^(?:documents-\d{8,}(?:\.delta)?\.json|links-\d{8,}\.json|memories-\d{8,}\.jsonl)$/.test(name);
}

/**
 * The store's own files and folders among `names` (a folder's entries): a folder holding any of them
 * but no manifest is a store that lost it, for `rlm repair` to rebuild, never a place to make a new one
 * (that would write over them).
 */
export function storeFilesAmong(names: readonly string[]): string[] {
  return names.filter((n) => n === SEGMENTS_DIR || isGenerationFile(n)).sort();
}

export function generationFile(kind: 'documents' | 'links', generation: number): string {
  return `${kind}-${String(generation).padStart(8, '0')}.json`;
}

/** The three files of a schema 3 segment. */
export type SegmentKind = 'chunks' | 'bm25' | 'links';

/** `seg-N.chunks`, `seg-N.bm25` or `seg-N.links`: a file of a schema 3 segment. */
export function segmentPath(dir: string, segment: string, kind: SegmentKind): string {
  return path.join(dir, SEGMENTS_DIR, `${segment}.${kind}`);
}

/** The JSON files of a schema 1/2 segment (memory/files/legacy-segment.ts). */
export type SegmentPart = 'chunks' | 'meta' | 'bm25' | 'links';

export function segmentFile(dir: string, segment: string, part: SegmentPart): string {
  return path.join(dir, SEGMENTS_DIR, `${segment}.${part}.json`);
}

/** A schema 1/2 segment's text column (memory/grep/segment-text.ts). */
export function segmentTextFile(dir: string, segment: string): string {
  return path.join(dir, SEGMENTS_DIR, `${segment}.text`);
}

const fileName = string((name) => {
  if (name === '') return 'must be a file name';
  return /[\\/]/.test(name) ? 'must be a file name in the store folder, not a path' : null;
});
const whole = number({ int: 'must be an integer', min: [0, 'must be >= 0'] });
const integer = number({ int: 'must be an integer' });
const matching = (re: RegExp, message: string) => string((s) => (re.test(s) ? null : message));

/** What any version of the manifest has: read first, so a newer schema is refused before its fields are judged. */
const manifestHeader = object({
  format: oneOf([STORE_FORMAT], `not an rlm store manifest (format should be "${STORE_FORMAT}")`),
  schema: (v) =>
    typeof v === 'number' && Number.isInteger(v) ? null : { path: [], message: 'schema version missing' },
});

/**
 * The manifest `rlm-store.json` (memory/SCHEMA.md). Fields it does not know are kept, so a later minor
 * addition does not make older rlm versions call the store corrupt.
 */
const manifestShape = object({
  format: oneOf([STORE_FORMAT], `not an rlm store manifest (format should be "${STORE_FORMAT}")`),
  schema: integer,
  generation: whole,
  createdAt: string(),
  updatedAt: string(),
  tokenizer: string(),
  nextSegment: whole,
  segments: array(matching(/^seg-\d{6,}$/, 'must be a segment name (seg-NNNNNN)')),
  documents: fileName,
  links: fileName,
  embedder: nullable(
    object({
      spec: string((s) => (s === '' ? 'must not be empty' : null)),
      dimensions: number({ int: 'must be an integer', min: [1, 'must be >= 1'] }),
    }),
  ),
  memory: optional(
    object({
      journal: matching(/^memories-\d+\.jsonl$/, 'must be a journal file name (memories-N.jsonl)'),
      settings: object({}),
    }),
  ),
  related: optional(whole),
  documentLog: optional(array(matching(/^documents-\d+\.delta\.json$/, 'must be a documents log file name'))),
  legacy: optional(array(matching(/^seg-\d{6,}$/, 'must be a segment name (seg-NNNNNN)'))),
});

/** `documents-G.json`: the current documents; each record needs what reading its chunks needs. */
const documentRecordShape = object({
  id: string(),
  path: nullable(string()),
  hash: string(),
  segment: string(),
  first: whole,
  chunks: whole,
});
const documentsShape = object({ version: integer, documents: array(documentRecordShape) });

/** `documents-G.delta.json`: the records a commit added or changed, and the ids it removed. */
const documentsDeltaShape = object({
  version: integer,
  put: array(documentRecordShape),
  remove: array(string()),
});

/** `links-G.json`: the hand-set links. */
const linksShape = object({
  version: integer,
  links: array(
    object({
      from: string(),
      to: string(),
      type: oneOf(['supports', 'contradicts', 'summarizes'], 'must be supports, contradicts or summarizes'),
    }),
  ),
});

/** Checks `value` against `shape`; STORE_CORRUPT naming the file and the first bad field otherwise. */
function check<T>(shape: Shape, value: unknown, file: string): T {
  const p = shape(value);
  if (p) throw corrupt(file, describeProblem(p));
  return value as T;
}

/** Validates a parsed manifest, or throws STORE_CORRUPT / BAD_INPUT naming the file. */
export function checkManifest(value: unknown, file: string): Manifest {
  const header = check<{ schema: number }>(manifestHeader, value, file);
  if (header.schema > SCHEMA_VERSION) {
    throw new RlmError(
      'BAD_INPUT',
      `store ${path.dirname(file)} has schema ${header.schema}, newer than this rlm understands (${SCHEMA_VERSION}); upgrade rlm`,
    );
  }
  return check<Manifest>(manifestShape, value, file);
}

/** Validates a parsed documents file, or throws STORE_CORRUPT naming the file. */
export function checkDocuments(value: unknown, file: string): DocumentsFile {
  return check<DocumentsFile>(documentsShape, value, file);
}

/** Validates a parsed documents log file, or throws STORE_CORRUPT naming the file. */
export function checkDocumentsDelta(
  value: unknown,
  file: string,
): { put: DocumentRecord[]; remove: string[] } {
  return check<{ put: DocumentRecord[]; remove: string[] }>(documentsDeltaShape, value, file);
}

/** Validates a parsed links file, or throws STORE_CORRUPT naming the file. */
export function checkLinks(value: unknown, file: string): LinksFile {
  return check<LinksFile>(linksShape, value, file);
}
