/**
 * The steps of an ingest (and of a repair) between reading a file and writing a segment: deciding
 * whether a document changed and chunking it, turning chunks into records, and embedding them.
 */
import { sep } from 'node:path';
import { chunkerFor, chunkText } from '../ingest/chunkers/index.ts';
import { classifyChunk } from '../ingest/classify.ts';
import { contentHash } from '../ingest/files.ts';
import type { Embedder } from '../search/embedders/types.ts';
import type { VectorIndex } from '../search/vectors.ts';
import type {
  ChunkDraft,
  ChunkerName,
  ChunkRecord,
  DocumentRecord,
  ImportedDocument,
  IngestOptions,
  IngestReport,
} from '../types.ts';
import { chunkKey } from './graph.ts';

/** A chunked document waiting to be written. */
export interface PendingDoc {
  record: Omit<DocumentRecord, 'segment' | 'first' | 'chunks' | 'tokens'>;
  drafts: ChunkDraft[];
  replaced: boolean;
}

/** Chunk records of `docs` in segment order, and the document records pointing at them. */
export function buildRecords(
  segment: string,
  createdAt: string,
  docs: PendingDoc[],
  tags: string[],
): { records: ChunkRecord[]; documents: DocumentRecord[] } {
  const records: ChunkRecord[] = [];
  const documents: DocumentRecord[] = [];
  for (const doc of docs) {
    const first = records.length;
    let tokens = 0;
    const hints = { chunker: doc.record.chunker, ...(doc.record.path ? { path: doc.record.path } : {}) };
    doc.drafts.forEach((d, ordinal) => {
      tokens += d.tokens;
      const rec: ChunkRecord = {
        id: `${doc.record.id}:${ordinal}`,
        document: doc.record.id,
        ordinal,
        start: d.start,
        end: d.end,
        tokens: d.tokens,
        type: classifyChunk(d.text, hints),
        tags: [...new Set([...tags, ...(d.tags ?? [])])],
        createdAt,
        text: d.text,
      };
      if (d.section) rec.section = d.section;
      if (d.time) rec.time = d.time;
      records.push(rec);
    });
    documents.push({ ...doc.record, segment, first, chunks: doc.drafts.length, tokens });
  }
  return { records, documents };
}

const EMBED_BATCH = 256;

/** Embeds `records` of `segment` into the vector index, after deleting the `stale` keys. */
export async function embedRecords(
  vectors: { index: VectorIndex; embedder: Embedder },
  segment: string,
  records: ChunkRecord[],
  stale: string[],
  checkAbort: () => void = () => {},
): Promise<void> {
  if (stale.length > 0) await vectors.index.delete(stale);
  for (let i = 0; i < records.length; i += EMBED_BATCH) {
    checkAbort();
    const part = records.slice(i, i + EMBED_BATCH);
    const vecs = await vectors.embedder.embed(part.map((r) => r.text));
    await vectors.index.upsert(
      part.map((r, j) => ({ id: chunkKey(segment, r.id), vector: Array.from(vecs[j] ?? []) })),
    );
  }
}

/** A report with every count at zero, to be filled in by an ingest. */
export function emptyIngestReport(notes: { path: string; note: string }[]): IngestReport {
  return {
    documents: 0,
    chunks: 0,
    links: 0,
    tokens: 0,
    added: 0,
    updated: 0,
    skipped: 0,
    removed: 0,
    elapsedMs: 0,
    notes,
  };
}

/**
 * Chunks one document into a {@link PendingDoc}, or returns null (and counts it skipped) when the
 * stored version `existing` has the same content, chunker and tags.
 */
export function prepareDocument(
  existing: DocumentRecord | undefined,
  id: string,
  path: string | null,
  text: string,
  notes: string[],
  opts: IngestOptions,
  report: IngestReport,
): PendingDoc | null {
  const hash = contentHash(text);
  const chunker: ChunkerName = opts.chunker ?? chunkerFor(path ?? `${id}.txt`, text);
  const tags = [...new Set(opts.tags ?? [])].sort();
  if (
    existing &&
    existing.hash === hash &&
    existing.chunker === chunker &&
    sameList(existing.tags ?? [], tags)
  ) {
    report.skipped++;
    return null;
  }
  if (existing) report.updated++;
  else report.added++;
  const chunkNotes = [...notes];
  const drafts = chunkText(text, chunker, {
    onNote: (note) => chunkNotes.push(note),
    ...(opts.chunkTokens !== undefined ? { chunkTokens: opts.chunkTokens } : {}),
    ...(opts.overlapTokens !== undefined ? { overlapTokens: opts.overlapTokens } : {}),
    ...(path ? { path } : {}),
  });
  for (const note of chunkNotes) report.notes.push({ path: path ?? id, note });
  const record: PendingDoc['record'] = {
    id,
    path,
    hash,
    bytes: Buffer.byteLength(text),
    chars: text.length,
    chunker,
    ingestedAt: new Date().toISOString(),
    ...(tags.length > 0 ? { tags } : {}),
    ...(chunkNotes.length > 0 ? { notes: chunkNotes } : {}),
  };
  return { record, drafts, replaced: existing !== undefined };
}

/**
 * An importer's pre-chunked document as a {@link PendingDoc}, or null (counted skipped) when the stored
 * version has the same text, tags and meta.
 */
export function prepareImported(
  existing: DocumentRecord | undefined,
  doc: ImportedDocument,
  report: IngestReport,
): PendingDoc | null {
  const hash = contentHash(doc.text);
  const tags = [...new Set(doc.tags ?? [])].sort();
  if (
    existing &&
    existing.hash === hash &&
    sameList(existing.tags ?? [], tags) &&
    JSON.stringify(existing.meta ?? null) === JSON.stringify(doc.meta ?? null)
  ) {
    report.skipped++;
    return null;
  }
  if (existing) report.updated++;
  else report.added++;
  for (const note of doc.notes ?? []) report.notes.push({ path: doc.path ?? doc.id, note });
  const record: PendingDoc['record'] = {
    id: doc.id,
    path: doc.path,
    hash,
    bytes: Buffer.byteLength(doc.text),
    chars: doc.text.length,
    chunker: 'turn',
    ingestedAt: new Date().toISOString(),
    ...(tags.length > 0 ? { tags } : {}),
    ...(doc.notes && doc.notes.length > 0 ? { notes: doc.notes } : {}),
    ...(doc.meta ? { meta: doc.meta } : {}),
  };
  const drafts = doc.drafts.map((d) => ({ ...d, tags: [...new Set([...tags, ...(d.tags ?? [])])] }));
  return { record, drafts, replaced: existing !== undefined };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Documents ingested from inside `roots` (folders, or files given directly) whose file is not in `seen`. */
export function vanished(docs: DocumentRecord[], roots: string[], seen: Set<string>): DocumentRecord[] {
  return docs.filter(
    (d) =>
      d.path !== null &&
      !seen.has(d.path) &&
      roots.some((r) => d.path === r || d.path!.startsWith(r.endsWith(sep) ? r : r + sep)),
  );
}
