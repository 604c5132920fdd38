/**
 * `MemoryChunkStore`: the same chunk graph and interface as {@link ChunkStore}, held in memory, for
 * ephemeral contexts (an `rlm answer --context FILE` run, tests). Nothing touches the disk.
 */

import { RlmError } from '../../core/errors.ts';
import { AccessLog } from '../engine/access.ts';
import type { SegmentSource } from '../engine/graph.ts';
import { RememberingStore } from '../engine/memories.ts';
import type { CommittedState, Persistence, SegmentFiles, StoreLock } from '../engine/persistence.ts';
import type { SegmentLinks, SegmentMeta } from '../engine/segment.ts';
import type { Bm25Segment } from '../search/bm25.ts';

class MemoryPersistence implements Persistence, SegmentSource {
  readonly source: SegmentSource = this;
  private readonly files = new Map<string, SegmentFiles>();
  private readonly access = new AccessLog(null);
  private readonly journals = new Map<string, string[]>();
  state: CommittedState = {
    generation: 1,
    nextSegment: 1,
    segments: [],
    documents: new Map(),
    manual: [],
    embedder: null,
  };

  private get(segment: string): SegmentFiles {
    const f = this.files.get(segment);
    if (!f) throw new RlmError('NOT_FOUND', `segment ${segment} is not in this memory store`);
    return f;
  }
  meta(segment: string): SegmentMeta {
    return this.get(segment).meta;
  }
  texts(segment: string): string[] {
    return this.get(segment).chunks.chunks.map((c) => c.text);
  }
  bm25(segment: string): Bm25Segment {
    return this.get(segment).bm25;
  }
  links(segment: string): SegmentLinks {
    return this.get(segment).links;
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
    this.files.set(name, files);
  }
  async commit(state: CommittedState): Promise<void> {
    this.state = state;
    for (const name of this.journals.keys()) if (name !== state.memory?.journal) this.journals.delete(name);
    const live = new Set(state.segments);
    for (const name of this.files.keys()) if (!live.has(name)) this.files.delete(name);
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

export class MemoryChunkStore extends RememberingStore {
  constructor() {
    const persistence = new MemoryPersistence();
    super(persistence, persistence.state);
  }
}
