/**
 * The steps of an ingest between reading a file and writing it, shared by every backend: deciding
 * whether a document changed and chunking it, and turning chunks into records.
 */
import { sep } from 'node:path';
import type { JournalEntry } from '../memories/memory-model.ts';
import type {
  ChunkDraft,
  ChunkerName,
  ChunkRecord,
  ChunkType,
  DocumentRecord,
  ImportedDocument,
  IngestOptions,
  IngestReport,
} from '../types.ts';
import { type ChunkJob, type ChunkResult, runChunkJob } from './chunk-job.ts';
import { chunkerFor, chunkText } from './chunkers/index.ts';
import { classifyChunk } from './classify.ts';
import { contentHash } from './files.ts';

/** A chunked document waiting to be written. */
export interface PendingDoc {
  record: Omit<DocumentRecord, 'segment' | 'first' | 'chunks' | 'tokens'>;
  drafts: ChunkDraft[];
  /** The drafts' types when chunking classified them already (see ./chunk-job.ts); else computed on write. */
  types?: ChunkType[];
  replaced: boolean;
}

/** A document and its chunk records exactly as another store holds them (`rlm store copy`). */
export interface ExactDocument {
  document: DocumentRecord;
  chunks: ChunkRecord[];
}

/** Records of copied documents laid out like {@link buildRecords}' output: nothing is recomputed. */
export function exactRecords(
  segment: string,
  items: ExactDocument[],
): { records: ChunkRecord[]; documents: DocumentRecord[] } {
  const records: ChunkRecord[] = [];
  const documents: DocumentRecord[] = [];
  for (const { document, chunks } of items) {
    documents.push({ ...document, segment, first: records.length, chunks: chunks.length });
    records.push(...chunks);
  }
  return { records, documents };
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
        type: doc.types?.[ordinal] ?? classifyChunk(d.text, hints),
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

/** A changed document whose chunking is under way: what {@link finishDocument} completes. */
export interface PlannedDoc {
  job: ChunkJob;
  record: Omit<PendingDoc['record'], 'notes'>;
  /** Notes from reading the file, before chunking's own. */
  notes: string[];
  replaced: boolean;
}

/**
 * Decides whether one document needs chunking: null (counted skipped) when the stored version
 * `existing` has the same content, chunker and tags, else the chunking to do (counted added or updated).
 */
export function planDocument(
  existing: DocumentRecord | undefined,
  id: string,
  path: string | null,
  text: string,
  notes: string[],
  opts: IngestOptions,
  report: IngestReport,
): PlannedDoc | null {
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
  const record: PlannedDoc['record'] = {
    id,
    path,
    hash,
    bytes: Buffer.byteLength(text),
    chars: text.length,
    chunker,
    ingestedAt: new Date().toISOString(),
    ...(tags.length > 0 ? { tags } : {}),
  };
  const job: ChunkJob = {
    text,
    chunker,
    path,
    ...(opts.chunkTokens !== undefined ? { chunkTokens: opts.chunkTokens } : {}),
    ...(opts.overlapTokens !== undefined ? { overlapTokens: opts.overlapTokens } : {}),
  };
  return { job, record, notes, replaced: existing !== undefined };
}

/** A planned document with its chunks, as a {@link PendingDoc}; its notes go to the report. */
export function finishDocument(
  plan: Omit<PlannedDoc, 'job'>,
  chunked: ChunkResult,
  report: IngestReport,
): PendingDoc {
  const notes = [...plan.notes, ...chunked.notes];
  for (const note of notes) report.notes.push({ path: plan.record.path ?? plan.record.id, note });
  const record: PendingDoc['record'] = { ...plan.record, ...(notes.length > 0 ? { notes } : {}) };
  return { record, drafts: chunked.drafts, types: chunked.types, replaced: plan.replaced };
}

/** {@link planDocument} and {@link finishDocument} with the chunking done inline. */
export function prepareDocument(...args: Parameters<typeof planDocument>): PendingDoc | null {
  const plan = planDocument(...args);
  const report = args[6];
  return plan && finishDocument(plan, runChunkJob(plan.job), report);
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

/** A memory as a document waiting to be written. */
export function memoryPending(e: JournalEntry): PendingDoc {
  const tags = [...e.tags].sort();
  const drafts = chunkText(e.text, 'memory').map((d) => ({ ...d, tags, time: e.createdAt }));
  return {
    record: {
      id: e.id,
      path: null,
      hash: contentHash(e.text),
      bytes: Buffer.byteLength(e.text),
      chars: e.text.length,
      chunker: 'memory',
      ingestedAt: e.createdAt,
      ...(tags.length > 0 ? { tags } : {}),
      memory: { topic: e.topic, importance: e.importance, source: e.source },
    },
    drafts,
    replaced: false,
  };
}
