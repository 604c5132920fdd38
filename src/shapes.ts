/**
 * JSON shapes that CONTRACTS.md fixes and that more than one surface prints: the CLI's `--json` and the
 * MCP server's structured content must stay identical, so both build them here. Results that point into
 * a store name the file each document came from (`path`, null for text ingested without one).
 */
import type { RecallHit } from '../memory/engine/memories.ts';
import { foldParts } from '../memory/graph-rules.ts';
import { documentTags } from '../memory/read.ts';
import type {
  Awaitable,
  ChunkRecord,
  DocumentRecord,
  DocumentText,
  GrepResult,
  Link,
  SearchHit,
} from '../memory/types.ts';
import type { RlmResult } from './runtime/result.ts';

/** Scores to four decimals: enough to rank by, without float noise in scripts' diffs. */
export function roundScore(n: number): number {
  return Math.round(n * 10000) / 10000;
}

/** Looks a document up by id (a store's `findDocument`). */
export type DocumentLookup = (documentId: string) => Pick<DocumentRecord, 'path'> | undefined;

/**
 * A {@link DocumentLookup} for the documents of `chunkIds` (chunk or document ids), each read from the
 * store once: a store on a server answers lookups asynchronously, the shapes above need them at hand.
 */
export async function lookupFor(
  store: { findDocument(idOrPath: string): Awaitable<DocumentRecord | undefined> },
  chunkIds: Iterable<string>,
): Promise<DocumentLookup> {
  const found = new Map<string, DocumentRecord | undefined>();
  for (const id of new Set([...chunkIds].map(documentOf))) found.set(id, await store.findDocument(id));
  return (id) => found.get(id);
}

/** `{results:[{id, score, preview, document, path, tags}]}` of `rlm search --json` and `rlm_search`. */
export function searchResults(hits: SearchHit[]): {
  results: {
    id: string;
    score: number;
    preview: string;
    document: string;
    path: string | null;
    tags: string[];
  }[];
} {
  return {
    results: hits.map((h) => ({
      id: h.id,
      score: roundScore(h.score),
      preview: h.preview,
      document: h.document,
      path: h.path,
      tags: h.tags,
    })),
  };
}

/** `{id, text, tokens, document, path, tags, links}` of `rlm peek --json` and `rlm_peek`. */
export function peekResult(
  chunk: ChunkRecord,
  links: Link[],
  lookup: DocumentLookup,
): {
  id: string;
  text: string;
  tokens: number;
  document: string;
  path: string | null;
  tags: string[];
  links: Link[];
} {
  return {
    id: chunk.id,
    text: chunk.text,
    tokens: chunk.tokens,
    document: chunk.document,
    path: lookup(chunk.document)?.path ?? null,
    tags: chunk.tags,
    links: links.map((l) => ({ from: l.from, to: l.to, type: l.type, strength: l.strength })),
  };
}

/**
 * The same object for a whole document (a memory, a file's parts): its id in `id` and `document`, its
 * text (or the slice read), token count, file, tags and the links that leave it.
 */
export function documentPeekResult(read: DocumentText, links: Link[]): ReturnType<typeof peekResult> {
  const first = read.documents[0]!;
  return {
    id: first.id,
    text: read.text,
    tokens: read.documents.reduce((n, d) => n + d.tokens, 0),
    document: first.id,
    path: first.path,
    tags: documentTags(read.documents),
    links: links.map((l) => ({ from: l.from, to: l.to, type: l.type, strength: l.strength })),
  };
}

/** `{matches:[{id, offset, text, path}], truncated}` of `rlm grep --json` and `rlm_grep`. */
export function grepResults(
  result: GrepResult,
  lookup: DocumentLookup,
): { matches: { id: string; offset: number; text: string; path: string | null }[]; truncated: boolean } {
  return {
    matches: result.matches.map((m) => ({
      id: m.id,
      offset: m.offset,
      text: m.text,
      path: chunkPath(m.id, lookup),
    })),
    truncated: result.truncated,
  };
}

/** `{id, path, links:[{from, to, type, strength}]}` of `rlm links --json`. */
export function linksResult(
  id: string,
  links: Link[],
  lookup: DocumentLookup,
): { id: string; path: string | null; links: Link[] } {
  return {
    id,
    path: lookup(documentOf(id))?.path ?? null,
    links: links.map((l) => ({ from: l.from, to: l.to, type: l.type, strength: l.strength })),
  };
}

/** A document of `rlm ls --json`. */
interface ListedDocument {
  id: string;
  path: string | null;
  chunks: number;
  tokens: number;
  modified: string;
  parts?: number;
}

/**
 * `{documents:[{id, path, chunks, tokens, modified, parts?}]}` of `rlm ls --json`, sorted by path then id.
 * A big file stored in parts (`ID`, `ID.p2`, …) is one entry, as peek, grep and rm take it: its first
 * part's id, the parts' chunks and tokens together, the latest ingest, and `parts`, their number.
 */
export function documentList(docs: DocumentRecord[]): { documents: ListedDocument[] } {
  const files = foldParts(
    docs,
    (d): ListedDocument => ({
      id: d.id,
      path: d.path,
      chunks: d.chunks,
      tokens: d.tokens,
      modified: d.ingestedAt,
    }),
    (file, d) => {
      file.chunks += d.chunks;
      file.tokens += d.tokens;
      if (d.ingestedAt > file.modified) file.modified = d.ingestedAt;
      file.parts = (file.parts ?? 1) + 1;
    },
  );
  const sorted = files.sort((a, b) => (a.path ?? a.id).localeCompare(b.path ?? b.id));
  return { documents: sorted };
}

/**
 * True when a run with this status has no answer, only the model's last prose (an error, an abort, a
 * spent budget): it must never be shown as an answer. After `max_iterations` the model was asked for
 * its best answer, and gave one.
 */
export function noAnswer(status: RlmResult['status']): boolean {
  return status === 'error' || status === 'aborted' || status === 'budget';
}

/**
 * The `rlm answer --json` object and `rlm_answer`'s structured content: the contract fields only
 * (per-model usage and run ids are internal detail), plus the error of a run that did not finish.
 */
export function answerResult(
  r: RlmResult,
): Pick<
  RlmResult,
  'answer' | 'status' | 'iterations' | 'subCalls' | 'maxDepthReached' | 'usage' | 'elapsedMs' | 'error'
> {
  return {
    answer: r.answer,
    status: r.status,
    iterations: r.iterations,
    subCalls: r.subCalls,
    maxDepthReached: r.maxDepthReached,
    usage: { inputTokens: r.usage.inputTokens, outputTokens: r.usage.outputTokens, costUsd: r.usage.costUsd },
    elapsedMs: r.elapsedMs,
    ...(r.error === undefined ? {} : { error: { code: r.error.code, message: r.error.message } }),
  };
}

/** The document part of a chunk id `DOCUMENT:ORDINAL`. */
function documentOf(chunkId: string): string {
  const colon = chunkId.lastIndexOf(':');
  return colon === -1 ? chunkId : chunkId.slice(0, colon);
}

/** The file a chunk's document came from (null for text ingested without one). */
export function chunkPath(chunkId: string, lookup: DocumentLookup): string | null {
  return lookup(documentOf(chunkId))?.path ?? null;
}

/** `{results:[{id, score, text, topic, importance, weight, created, tags, archived}]}` of `rlm recall --json` and `rlm_recall`. */
export function recallResults(hits: RecallHit[]): {
  results: {
    id: string;
    score: number;
    text: string;
    topic: string;
    importance: string;
    weight: number;
    created: string;
    tags: string[];
    archived: boolean;
  }[];
} {
  return {
    results: hits.map((h) => ({
      id: h.id,
      score: roundScore(h.score),
      text: h.text,
      topic: h.topic,
      importance: h.importance,
      weight: roundScore(h.weight),
      created: h.created,
      tags: h.tags,
      archived: h.archived,
    })),
  };
}
