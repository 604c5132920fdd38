/**
 * `MemoryChunkStore`: the same chunk graph and interface as {@link ChunkStore}, held in memory, for
 * ephemeral contexts (an `rlm answer --context FILE` run, tests). Nothing touches the disk: segments are
 * the bytes of the files a folder store would write, read through the same readers.
 */

import { RlmError } from '../../core/errors.ts';
import { AccessLog } from '../engine/access.ts';
import { DocumentCatalog } from '../engine/catalog.ts';
import type { SegmentSource } from '../engine/graph.ts';
import { RememberingStore } from '../engine/memories.ts';
import { memorySegment } from '../engine/memory-tail.ts';
import type { CommittedState, Persistence, SegmentFiles, StoreLock } from '../engine/persistence.ts';
import type { Segment } from '../engine/segment.ts';
import type { Store } from '../store-api.ts';

/** The schema a store in memory behaves as (memory/SCHEMA.md). */
const MEMORY_SCHEMA = 3;

class MemoryPersistence implements Persistence, SegmentSource {
  readonly source: SegmentSource = this;
  readonly inFiles = false;
  readonly schema = MEMORY_SCHEMA;
  private readonly segments = new Map<string, Segment>();
  private readonly access = new AccessLog(null);
  private readonly journals = new Map<string, string[]>();
  state: CommittedState = {
    generation: 1,
    nextSegment: 1,
    segments: [],
    documents: new DocumentCatalog(),
    manual: [],
    embedder: null,
    schema: MEMORY_SCHEMA,
    related: 0,
  };

  segment(name: string): Segment {
    const seg = this.segments.get(name);
    if (!seg) throw new RlmError('NOT_FOUND', `segment ${name} is not in this memory store`);
    return seg;
  }

  async readState(): Promise<CommittedState> {
    return this.state;
  }
  async generation(): Promise<number> {
    return this.state.generation;
  }
  /** Offsets here count lines, not bytes: callers only hand back what they were given. */
  async readJournal(name: string, from: number): Promise<{ lines: string[]; end: number }> {
    const lines = this.journals.get(name) ?? [];
    return { lines: lines.slice(from), end: lines.length };
  }
  async appendJournal(name: string, at: number, line: string): Promise<number> {
    const lines = (this.journals.get(name) ?? []).slice(0, at);
    lines.push(line);
    this.journals.set(name, lines);
    return lines.length;
  }
  async lock(): Promise<StoreLock> {
    return { release: async () => {} };
  }
  async writeSegment(name: string, files: SegmentFiles): Promise<void> {
    this.segments.set(name, memorySegment(name, files));
  }
  async commit(state: CommittedState): Promise<void> {
    this.state = state;
    for (const name of this.journals.keys()) if (name !== state.memory?.journal) this.journals.delete(name);
    const live = new Set(state.segments);
    for (const name of this.segments.keys()) if (!live.has(name)) this.segments.delete(name);
  }
  touch(ids: string[], at?: number): void {
    this.access.touch(ids, at);
  }
  accessStats(id: string) {
    return this.access.stats(id);
  }
  accessRaw(id: string): [number, number] {
    return this.access.raw(id);
  }
  forgetAccess(documents: ReadonlySet<string>): void {
    this.access.drop(documents);
  }
  async flush(): Promise<void> {}
}

export class MemoryChunkStore extends RememberingStore implements Store {
  /** A store in memory has no place to show. */
  readonly location = '(memory)';

  constructor() {
    const persistence = new MemoryPersistence();
    super(persistence, persistence.state);
  }
}
