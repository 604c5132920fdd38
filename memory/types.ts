/**
 * Shapes of the chunk graph, shared by the store, chunkers, linker, search and the sandbox bridge.
 * On-disk layout is documented in memory/SCHEMA.md.
 */
import type { Env } from '../core/env.ts';

export type ChunkType = 'fact' | 'decision' | 'preference' | 'pattern' | 'note' | 'code' | 'text';
export const CHUNK_TYPES: readonly ChunkType[] = [
  'fact',
  'decision',
  'preference',
  'pattern',
  'note',
  'code',
  'text',
];

export type LinkType = 'follows' | 'context_of' | 'related_to' | 'supports' | 'contradicts' | 'summarizes';
export const LINK_TYPES: readonly LinkType[] = [
  'follows',
  'context_of',
  'related_to',
  'supports',
  'contradicts',
  'summarizes',
];

/** `memory`: one chunk holding a remembered text whole (see memory/engine/memories.ts). */
export type ChunkerName = 'size' | 'paragraph' | 'lines' | 'turn' | 'markdown' | 'memory';

export type MemoryImportance = 'critical' | 'high' | 'medium' | 'low';
export const MEMORY_IMPORTANCE: readonly MemoryImportance[] = ['critical', 'high', 'medium', 'low'];
export type MemorySource = 'cli' | 'mcp' | 'hook' | 'consolidation';
export const MEMORY_SOURCES: readonly MemorySource[] = ['cli', 'mcp', 'hook', 'consolidation'];

/** Decay, archiving and consolidation settings of a store's memories (defaults in memory/memories/memory-model.ts). */
export interface MemorySettings {
  /** Weight kept per day without access, before the importance multiplier (default 0.95). */
  decayRate: number;
  /** Exponent per importance: days count this many times (critical 0: never decays). */
  multipliers: Record<MemoryImportance, number>;
  /** Under this weight a memory is archived (default 0.1). */
  pruneThreshold: number;
  /** Active memories in a topic above which automatic consolidation runs (default 10). */
  consolidateThreshold: number;
  /** Model spec for automatic consolidation; null = off (default). */
  autoConsolidate: string | null;
  /** Journaled memories folded into a segment at once (default 1000). */
  foldEvery: number;
}

/** The manifest's `memory` entry. */
export interface MemoryConfig {
  /** File (in the store folder) of memories remembered since the last fold, one JSON line each. */
  journal: string;
  settings: MemorySettings;
}

/** What makes a document a memory: kept on its {@link DocumentRecord}. */
export interface MemoryInfo {
  topic: string;
  importance: MemoryImportance;
  source: MemorySource;
  /** ISO time it was archived (out of default recall and search), absent while active. */
  archivedAt?: string;
}

/** A piece of text produced by a chunker, before it gets an id. Offsets are UTF-16 code units in the document text. */
export interface ChunkDraft {
  text: string;
  start: number;
  end: number;
  tokens: number;
  /** Heading path for markdown, role/turn info for transcripts. */
  section?: string;
  tags?: string[];
  /** ISO time from the source (e.g. a transcript turn), if any. */
  time?: string;
}

export interface AccessStats {
  count: number;
  /** ISO time of the last access, or null if never read. */
  last: string | null;
}

/** A chunk as stored. */
export interface ChunkRecord {
  id: string;
  document: string;
  ordinal: number;
  start: number;
  end: number;
  tokens: number;
  type: ChunkType;
  tags: string[];
  section?: string;
  createdAt: string;
  /** Time from the source when it has one (transcripts). */
  time?: string;
  text: string;
}

export interface DocumentRecord {
  id: string;
  /** Path as given at ingest, absolute. Null for text added directly. */
  path: string | null;
  hash: string;
  bytes: number;
  /**
   * Length of the text in UTF-16 code units (JavaScript's `length`): the units chunk offsets and reads
   * use. Absent in stores written before it; readers then take the last chunk's end.
   */
  chars?: number;
  chunker: ChunkerName;
  chunks: number;
  tokens: number;
  ingestedAt: string;
  /** Segment holding this version of the document's chunks, and the index of its first chunk there. */
  segment: string;
  first: number;
  /** Tags given at ingest (applied to every chunk); a re-ingest with other tags rewrites the document. */
  tags?: string[];
  /** Notes raised while reading it (invalid UTF-8 replaced, lines skipped...). */
  notes?: string[];
  /** Set when the document is a remembered memory (one chunk). */
  memory?: MemoryInfo;
  /** Facts an importer keeps about the source (e.g. a Claude Code session part: file, byte range, project). */
  meta?: DocumentMeta;
}

/** Flat facts about a document's source, kept by importers in its record (see SCHEMA.md). */
export type DocumentMeta = Record<string, string | number>;

/** A document an importer has read and chunked itself, written as is by `importDocuments`. */
export interface ImportedDocument {
  id: string;
  path: string | null;
  text: string;
  drafts: ChunkDraft[];
  /** Tags on every chunk of the document. */
  tags?: string[];
  meta?: DocumentMeta;
  notes?: string[];
}

/** One step of an import: a document to add or replace, and/or documents to drop (by id). */
export interface ImportItem {
  add?: ImportedDocument;
  drop?: string[];
}

export interface Link {
  from: string;
  to: string;
  type: LinkType;
  /** 0..1 */
  strength: number;
}

export interface SearchOptions {
  /** Number of results, default 10. */
  k?: number;
  /**
   * Only these documents: document ids or the paths files were ingested from (a file in parts is named
   * whole); a name that matches no document is refused with BAD_INPUT, as grep's is.
   */
  document?: string | string[];
  tags?: string[];
  /** Chunk types; the pseudo-type `memory` keeps remembered memories (of any chunk type). */
  type?: ChunkType | 'memory' | (ChunkType | 'memory')[];
  /** Only memories of this topic. */
  topic?: string;
  /** Include archived memories (default false: they are out of search until restored). */
  archived?: boolean;
  /** Count the hits as accesses (default true). */
  touch?: boolean;
  /** Library callers: keep only chunks whose document passes (called for would-be results only). */
  where?: (doc: DocumentRecord) => boolean;
  /** Use fuzzy matching for query terms not in the vocabulary (default true). */
  fuzzy?: boolean;
  /** 'bm25' | 'vector' | 'hybrid' (default: hybrid when an embedder is configured, else bm25). */
  mode?: 'bm25' | 'vector' | 'hybrid';
  /** Told when hybrid search fell back to BM25 because the embedder failed. */
  onWarning?: (message: string) => void;
}

export interface SearchHit {
  id: string;
  score: number;
  /** The passage of the chunk that best matches the query, on one line (≤ 200 characters). */
  preview: string;
  document: string;
  /** The file the document was ingested from, or null (text ingested without a path). */
  path: string | null;
  tokens: number;
  tags: string[];
  type: ChunkType;
}

export interface GrepOptions {
  /** Treat the pattern as a literal string (default false: a JS regex source). */
  literal?: boolean;
  ignoreCase?: boolean;
  /** Maximum matches returned (default 100, at most 100,000). Not used with `count`. */
  limit?: number;
  /**
   * Characters of context either side of the matching line (default 0), taken across chunk edges within
   * the document.
   */
  context?: number;
  /**
   * Only these documents: document ids (a file's first id takes its other parts along, as readDocument
   * does) or ingested paths (a path names every part of its file). A store refuses a name it does not
   * have with BAD_INPUT, so a typo never reads as "no matches".
   */
  document?: string | string[];
  /**
   * Count instead of listing: the result's `matches` is empty and `counts` holds every occurrence and
   * every matching line, per document, with no cap.
   */
  count?: boolean;
  /**
   * Base CPU budget of the search in ms (default 2000). The budget grows by 50 ms per million characters
   * scanned, so a simple pattern finishes over any size; past it the search fails with TIMEOUT.
   */
  timeoutMs?: number;
}

export interface GrepMatch {
  /** The chunk the match starts in. */
  id: string;
  /** Offset of the match inside the chunk text. */
  offset: number;
  /** The line containing the match (a window of it when the line is long). */
  text: string;
  /** `context` characters before and after the line, across chunk edges within the document. */
  before: string;
  after: string;
  /**
   * The document the chunk belongs to, when the corpus names documents (a store always does). For a file
   * stored in parts (`ID`, `ID.p2`, …) it is the file's id `ID`: grep reads the parts as one text.
   */
  document?: string;
  /**
   * Offset of the match in the document's text (the chunk's `start` plus `offset`; in a later part of a
   * file stored in parts, plus the length of the parts before it: readDocument(ID)'s offsets), when the
   * chunk's text is a slice of the document (every chunker but `turn` over JSONL).
   */
  documentOffset?: number;
}

/** How often a pattern occurs in one document. */
export interface GrepDocumentCount {
  /** Document id (for a file stored in parts, the file's id `ID`: one count for all of its parts). */
  id: string;
  /** Every occurrence (non-overlapping, as `String.prototype.matchAll` finds them). */
  matches: number;
  /** Lines with at least one occurrence: what a listing would return, one per line. */
  lines: number;
}

/** The answer of a count-mode grep (`{count: true}`): no cap, nothing left out. */
export interface GrepCounts {
  matches: number;
  lines: number;
  /** Documents with at least one match, in search order. */
  documents: GrepDocumentCount[];
}

export interface GrepResult {
  matches: GrepMatch[];
  /** True when `limit` cut the list. */
  truncated: boolean;
  /** Set, with `matches` empty, when the grep was asked to count (`count: true`). */
  counts?: GrepCounts;
}

export interface StoreStats {
  documents: number;
  chunks: number;
  links: number;
  tokens: number;
  bytes: number;
  schema: number;
}

export interface IngestOptions {
  /** Force a chunker instead of choosing by file type. */
  chunker?: ChunkerName;
  /** Size chunker target tokens (default 2000) and overlap (default 200). */
  chunkTokens?: number;
  overlapTokens?: number;
  tags?: string[];
  /**
   * Forget documents that were ingested from inside the given folders (or as the given files) but no
   * longer exist there (default false).
   */
  prune?: boolean;
  /**
   * Files larger than this many bytes are read as a stream and stored as parts (documents `ID`, `ID.p2`,
   * ... with the same path), so an ingest's memory does not grow with one file's size (default 2 MiB;
   * it was 4 MiB: parts cut then are re-cut when their file is ingested again, memory/SCHEMA.md).
   */
  partBytes?: number;
  /** Text per committed step (default 4 MiB): what a crash can lose, and what memory an ingest holds. */
  segmentChars?: number;
  onProgress?: (p: IngestProgress) => void;
  /**
   * Cancels the ingest with `ABORTED`: checked while the paths are scanned, between the parts of a big
   * file and before each commit, so the batches committed before stay whole.
   */
  signal?: AbortSignal;
  /** Also take dot-files and dot-folders inside the given folders (default false). */
  includeHidden?: boolean;
  /** Disregard `.gitignore`/`.rlmignore` and enter node_modules too (default false). */
  noIgnore?: boolean;
  /** `.gitignore`-style patterns (relative to each given folder) of paths to leave out. */
  exclude?: string[];
  /**
   * Also follow symlinks that lead outside the given files and folders (default false: such links are
   * skipped with a note). Nothing in `/proc`, `/sys` or `/dev` is read either way.
   */
  followLinks?: boolean;
}

export interface IngestProgress {
  phase: 'scan' | 'read' | 'index' | 'commit';
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  current?: string;
}

export interface IngestReport {
  documents: number;
  chunks: number;
  links: number;
  tokens: number;
  added: number;
  updated: number;
  skipped: number;
  /** Documents forgotten because their file is gone (only with `prune`). */
  removed: number;
  elapsedMs: number;
  /** Files not ingested (binary, unreadable) and what was odd in the others (bad JSONL lines...). */
  notes: { path: string; note: string }[];
  /** Problems that did not stop the ingest (an embedder that failed: no vectors for these documents). */
  warnings?: string[];
  /** What the folder scan left out on purpose, counted (ingestPaths only). */
  passedOver?: { hidden: number; folders: number; ignored: number; excluded: number };
}

/** What `rlm repair` did (folder or PostgreSQL store). */
export interface RepairReport {
  /**
   * Segments of a folder store after the repair (0 for a PostgreSQL store, whose index segments the
   * actions count).
   */
  segments: number;
  documents: number;
  chunks: number;
  /** What was wrong and what was done about it. */
  actions: string[];
  /** Documents whose chunks could not be read, with the files to ingest again. */
  dropped: { id: string; path: string | null }[];
  /** False when documents would have been dropped and `confirm` said no: nothing was written. */
  applied: boolean;
}

export interface RepairOptions {
  /** Set or change the embedder and rebuild vectors with it; `none` removes the embedder and its vectors. */
  embedder?: string;
  /** Environment for embedder keys and endpoints (default process.env). */
  env?: Env;
  /** Folder store: how long to wait for another writer's lock, ms. */
  lockWaitMs?: number;
  /**
   * Asked before documents are dropped (chunks unreadable); nothing is written unless it returns true.
   * Without it, a repair that would drop documents changes nothing and reports them.
   */
  confirm?: (dropped: RepairReport['dropped']) => boolean | Promise<boolean>;
}

/**
 * A value now or later. Stores held in this process (a folder, memory) answer reads at once; a store on a
 * server (PostgreSQL) answers with a promise. Code written against the interfaces below awaits them.
 */
export type Awaitable<T> = T | Promise<T>;

/** Offsets of a document read: UTF-16 code units, clamped to the text; a negative one counts from the end. */
export interface TextRange {
  start?: number;
  end?: number;
}

/** A document's text, or a slice of it, as {@link ChunkReader.readDocument} returns it. */
export interface DocumentText {
  /** The records read, in order: the document, or every part of a file stored in parts (`ID`, `ID.p2`, …). */
  documents: DocumentRecord[];
  /** The text from `start` to `end`. */
  text: string;
  /** Where the slice lies in the whole text (UTF-16 code units, the offsets of chunk `start`/`end`). */
  start: number;
  end: number;
  /** The whole text's length. */
  length: number;
}

/** Read side of the chunk graph: what search, the sandbox and the MCP server need. */
export interface ChunkReader {
  /** Totals of the store: documents, chunks, links, tokens, schema. */
  stats(): Awaitable<StoreStats>;
  /** Every live document record, memories included. */
  documents(): Awaitable<DocumentRecord[]>;
  /** One chunk by id (`DOCUMENT:ORDINAL`), or undefined when no live chunk has it. */
  getChunk(id: string): Awaitable<ChunkRecord | undefined>;
  /** Chunks of one document in order. */
  documentChunks(documentId: string): Awaitable<ChunkRecord[]>;
  /**
   * A whole document's text, or the slice `range` of it, in one call (no loop over chunks for the
   * caller). `idOrPath` is a document id (a memory id too) or the path a file was ingested from. A file
   * stored in parts (`ID`, `ID.p2`, …) reads as the file's whole text when named by its path or by `ID`;
   * a part's own id reads that part. Offsets are the document's own (those of its chunks' `start`/`end`);
   * a transcript read from JSONL keeps no source text, so its text is its rendered exchanges joined by
   * blank lines. Undefined when no document has that id or path. Records no access.
   */
  readDocument(idOrPath: string, range?: TextRange): Promise<DocumentText | undefined>;
  /** Links from and to a chunk, optionally of one type (follows, context_of, related_to, supports, ...). */
  neighbors(id: string, type?: LinkType): Awaitable<Link[]>;
  /** Ranked chunks for a query: BM25, or hybrid with vectors when the store has an embedder. */
  search(query: string, opts?: SearchOptions): Promise<SearchHit[]>;
  /**
   * Regex or literal matches over every live chunk, each document read as one text (matches across chunk
   * edges are found, context reaches into neighbouring chunks, an overlap is read once). Bounded by
   * `opts.limit` (`truncated` says more exist); with `opts.count`, counts per document instead, uncapped.
   * @throws RlmError BAD_INPUT (bad pattern or option, unknown document), TIMEOUT (budget spent).
   */
  grep(pattern: string, opts?: GrepOptions): Promise<GrepResult>;
  /** Records reads for access stats; batched, never rewrites chunk files. */
  touch(ids: string[]): void;
}

/**
 * The chunk graph. `ChunkStore.open(dir)` for a directory, `PostgresStore.open(url)` for PostgreSQL,
 * `MemoryChunkStore` for ephemeral contexts; `openStore(dirOrUrl)` opens either of the first two.
 */
export interface ChunkStoreApi extends ChunkReader {
  /** Reads files and folders (recursively), chunks, indexes and links them; unchanged files are skipped. */
  ingestPaths(paths: string[], opts?: IngestOptions): Promise<IngestReport>;
  /** Adds or replaces a document from text (id given by the caller). */
  ingestText(
    documentId: string,
    text: string,
    opts?: IngestOptions & { path?: string },
  ): Promise<IngestReport>;
  /** Removes a document (by id or ingested path) with its chunks and links; false when there is none. */
  removeDocument(idOrPath: string): Promise<boolean>;
  /** Sets a hand-made link between two chunks (the other link types are computed). */
  link(from: string, to: string, type: 'supports' | 'contradicts', strength?: number): Promise<void>;
  /** Removes a hand-made link; false when it did not exist. */
  unlink(from: string, to: string, type: 'supports' | 'contradicts'): Promise<boolean>;
  /** How often and when a chunk was read (peek, search hits the model opened, recall). */
  accessStats(id: string): Awaitable<AccessStats>;
  /** Flushes pending access stats and releases the store; writes in flight finish first. */
  close(): Promise<void>;
}
