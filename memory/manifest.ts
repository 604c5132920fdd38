/**
 * The manifest `rlm-store.json` is the store's commit point: it names the live segments and the current
 * documents and links files. Everything it does not name is either older or not yet committed.
 */
import path from 'node:path';
import * as z from 'zod';
import { RlmError } from '../core/errors.ts';
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

const fileName = z
  .string()
  .min(1, 'must be a file name')
  .refine((name) => !/[\\/]/.test(name), 'must be a file name in the store folder, not a path');
const whole = z.number().int('must be an integer').min(0, 'must be >= 0');

/** What any version of the manifest has: read first, so a newer schema is refused before its fields are judged. */
const manifestHeader = z.looseObject({
  format: z.literal(STORE_FORMAT, `not an rlm store manifest (format should be "${STORE_FORMAT}")`),
  schema: z.number('schema version missing').int('schema version missing'),
});

/**
 * The manifest `rlm-store.json` (memory/SCHEMA.md). Fields it does not know are kept, so a later minor
 * addition does not make older rlm versions call the store corrupt.
 */
export const manifestSchema = z.looseObject({
  ...manifestHeader.shape,
  generation: whole,
  createdAt: z.string(),
  updatedAt: z.string(),
  tokenizer: z.string(),
  nextSegment: whole,
  segments: z.array(z.string().regex(/^seg-\d{6,}$/, 'must be a segment name (seg-NNNNNN)')),
  documents: fileName,
  links: fileName,
  embedder: z.object({ spec: z.string().min(1), dimensions: z.number().int().min(1) }).nullable(),
  memory: z
    .looseObject({
      journal: z.string().regex(/^memories-\d+\.jsonl$/, 'must be a journal file name (memories-N.jsonl)'),
      settings: z.looseObject({}),
    })
    .optional(),
});

/** `documents-G.json`: the current documents; each record needs what reading its chunks needs. */
const documentsFileSchema = z.looseObject({
  version: z.number().int(),
  documents: z.array(
    z.looseObject({
      id: z.string(),
      path: z.string().nullable(),
      hash: z.string(),
      segment: z.string(),
      first: whole,
      chunks: whole,
    }),
  ),
});

/** `links-G.json`: the hand-set links. */
const linksFileSchema = z.looseObject({
  version: z.number().int(),
  links: z.array(
    z.looseObject({
      from: z.string(),
      to: z.string(),
      type: z.enum(['supports', 'contradicts', 'summarizes'], 'must be supports, contradicts or summarizes'),
    }),
  ),
});

/** Checks `value` against `schema`; STORE_CORRUPT naming the file and the first bad field otherwise. */
function check<T>(schema: z.ZodType, value: unknown, file: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return value as T;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  const where = issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
  throw corrupt(file, `${where}${issue.message}`);
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
  return check<Manifest>(manifestSchema, value, file);
}

/** Validates a parsed documents file, or throws STORE_CORRUPT naming the file. */
export function checkDocuments(value: unknown, file: string): DocumentsFile {
  return check<DocumentsFile>(documentsFileSchema, value, file);
}

/** Validates a parsed links file, or throws STORE_CORRUPT naming the file. */
export function checkLinks(value: unknown, file: string): LinksFile {
  return check<LinksFile>(linksFileSchema, value, file);
}
