/**
 * The seam between a chunk store and where its bytes live: a folder of segment files
 * (memory/files/directory.ts) or memory (memory/in-memory/store.ts).
 */

import type { AccessStats, MemoryConfig } from '../types.ts';
import type { SegmentFiles } from './format-segment.ts';
import type { GraphState, SegmentSource } from './graph.ts';

export type { SegmentFiles } from './format-segment.ts';

/** The committed state of a store: what its manifest names. */
export interface CommittedState extends GraphState {
  nextSegment: number;
  embedder: { spec: string; dimensions: number } | null;
  /** Memory settings and journal; absent until the first memory. */
  memory?: MemoryConfig | undefined;
  /** The schema the store was last committed with (memory/SCHEMA.md): what stats report. */
  schema: number;
  /** Live segments in the schema 1/2 format, which `rlm repair` rewrites (folder stores only). */
  legacy?: readonly string[] | undefined;
}

/** A writer's hold on a store; released once its commit is done (or abandoned). */
export interface StoreLock {
  release(): Promise<void>;
}

/** Where a store keeps its data. */
export interface Persistence {
  readonly source: SegmentSource;
  /** Whether segments are kept in files (grep then reads them in its worker, one at a time). */
  readonly inFiles: boolean;
  /** The schema {@link commit} writes (memory/SCHEMA.md). */
  readonly schema: number;
  /** The latest committed state (a writer calls it under the lock). */
  readState(): Promise<CommittedState>;
  /** The latest committed generation: a cheap check before {@link readState}. */
  generation(): Promise<number>;
  /**
   * Complete lines of journal `name` from byte `from` on, and the byte offset after the last one (a torn
   * last line from a killed writer is left out). A missing journal is empty, with `missing` set.
   */
  readJournal(name: string, from: number): Promise<{ lines: string[]; end: number; missing?: true }>;
  /** Appends one line durably (fsync) at `at`, cutting a torn tail first; returns the new end. Under the lock. */
  appendJournal(name: string, at: number, line: string): Promise<number>;
  /** Takes the write lock for `command`; `signal` gives up the wait (ABORTED). */
  lock(command: string, signal?: AbortSignal): Promise<StoreLock>;
  writeSegment(name: string, files: SegmentFiles): Promise<void>;
  /** Makes `state` the committed one; segments not listed may be deleted afterwards. */
  commit(state: CommittedState): Promise<void>;
  /** Records reads of chunk ids (at `at` epoch ms, default now) for access stats. */
  touch(ids: string[], at?: number): void;
  accessStats(id: string): AccessStats;
  /** Access count and last access (epoch ms, 0 if never) of a chunk id. */
  accessRaw(id: string): [count: number, lastMs: number];
  /** Forgets the access stats of every chunk of these documents (deleted for good); written at the next commit. */
  forgetAccess(documents: ReadonlySet<string>): void;
  flush(): Promise<void>;
}
