/**
 * Chunking one document and classifying its chunks: the part of an ingest that depends on nothing but the
 * document's text and options, so it can run on another thread ({@link ./chunk-worker.ts}) while the
 * store indexes and writes the previous batch. Inline and on the worker it is this same function, so
 * a store's records do not depend on where it ran.
 */
import type { ChunkDraft, ChunkerName, ChunkType } from '../types.ts';
import { chunkText } from './chunkers/index.ts';
import { classifyChunk } from './classify.ts';

/** What chunking a document needs. Plain data: it crosses to a worker thread by structured clone. */
export interface ChunkJob {
  text: string;
  chunker: ChunkerName;
  path: string | null;
  chunkTokens?: number;
  overlapTokens?: number;
}

/** A document's drafts, their types (same order) and the notes chunking left. */
export interface ChunkResult {
  drafts: ChunkDraft[];
  types: ChunkType[];
  notes: string[];
}

export function runChunkJob(job: ChunkJob): ChunkResult {
  const notes: string[] = [];
  const drafts = chunkText(job.text, job.chunker, {
    onNote: (note) => notes.push(note),
    ...(job.chunkTokens !== undefined ? { chunkTokens: job.chunkTokens } : {}),
    ...(job.overlapTokens !== undefined ? { overlapTokens: job.overlapTokens } : {}),
    ...(job.path ? { path: job.path } : {}),
  });
  const hints = { chunker: job.chunker, ...(job.path ? { path: job.path } : {}) };
  return { drafts, types: drafts.map((d) => classifyChunk(d.text, hints)), notes };
}

/** Where documents get chunked: on this thread, or on a worker ({@link ./chunk-pool.ts}). */
export interface DocumentChunker {
  /** Chunks one document; results come back in the order the jobs were given. */
  chunk(job: ChunkJob): Promise<ChunkResult>;
  /** Frees what the chunker holds (a worker thread); pending jobs reject. */
  close(): Promise<void>;
}

/** Chunks on the calling thread, for ingests too small to repay a worker's start. */
export const inlineChunker: DocumentChunker = {
  chunk: async (job) => runChunkJob(job),
  close: async () => {},
};
