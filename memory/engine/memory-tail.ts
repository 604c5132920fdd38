/**
 * Journaled memories seen as chunks. Until a fold writes them into a real segment, the entries of the
 * memory journal are served to the {@link ChunkGraph} as small in-memory segments (`jrn-S-N`: the N
 * entries from entry S on), so search, grep, get_chunk and neighbors see a memory the moment
 * `remember` returns, without rewriting any store file.
 */
import { BufferBlob } from '../blob.ts';
import { buildRecords, memoryPending } from '../ingest/prepare.ts';
import { isJournalEntry, type JournalEntry } from '../memories/memory-model.ts';
import { buildTerms } from '../search/segment.ts';
import type { ChunkRecord, DocumentRecord } from '../types.ts';
import type { DocumentCatalog } from './catalog.ts';
import { FormatSegment, type SegmentFiles, segmentFiles } from './format-segment.ts';
import type { GraphState, SegmentSource } from './graph.ts';
import type { CommittedState, Persistence } from './persistence.ts';
import type { Segment } from './segment.ts';

/** Tail block sizes: closed blocks of 64 and of 8 entries, then one open block of fewer than 8. */
const BIG = 64;
const SMALL = 8;

/** The blocks covering `n` entries, as [start, count]: a block's contents change only when its name does. */
function blockLayout(n: number): [number, number][] {
  const out: [number, number][] = [];
  let at = 0;
  for (; at + BIG <= n; at += BIG) out.push([at, BIG]);
  for (; at + SMALL <= n; at += SMALL) out.push([at, SMALL]);
  if (at < n) out.push([at, n - at]);
  return out;
}
/** Tail sizes fit under this, so view generations of different commits never meet. */
export const MAX_TAIL = 1 << 20;

/** A journaled memory turned into its chunk and document records once (block rebuilds reuse them). */
interface Built {
  record: ChunkRecord;
  doc: DocumentRecord;
}

function buildOne(e: JournalEntry): Built {
  const { records, documents } = buildRecords('jrn', e.createdAt, [memoryPending(e)], []);
  return { record: records[0]!, doc: documents[0]! };
}

/** A segment held in memory: its files' bytes, read through the same readers as files on disk. */
export function memorySegment(name: string, files: SegmentFiles): Segment {
  const blob = (parts: Buffer[]) => new BufferBlob(Buffer.concat(parts), `(memory ${name})`);
  return new FormatSegment(name, {
    chunks: blob(files.chunks),
    bm25: blob(files.bm25),
    links: blob(files.links),
  });
}

/** A tail block as a segment (no links: a fold computes them) and its document records. */
function tailBlock(name: string, part: Built[]): { segment: Segment; documents: DocumentRecord[] } {
  const createdAt = part[0]?.record.createdAt ?? new Date(0).toISOString();
  const records: ChunkRecord[] = part.map((b) => b.record);
  const files = segmentFiles(name, createdAt, records, buildTerms(records.map((r) => r.text)), {
    edges: [],
    signatures: records.map(() => []),
  });
  return {
    documents: part.map((b, i) => ({ ...b.doc, segment: name, first: i })),
    segment: memorySegment(name, files),
  };
}

export class MemoryTail implements SegmentSource {
  /** Journal file these entries come from, and the byte offset read up to. */
  journal: string | null = null;
  end = 0;
  /**
   * Complete lines of the journal that are not a memory (a torn last line is never read: only damage
   * makes these). Readers go on without them; a writer must not fold them away (see memories.ts).
   */
  damaged = 0;
  private entries: JournalEntry[] = [];
  private built: Built[] = [];
  private readonly blocks = new Map<string, Segment>();
  /** Document records of each block, by block name (they name their segment). */
  private readonly blockDocs = new Map<string, DocumentRecord[]>();
  /** Blocks added since the graph's view last took their documents. */
  private fresh: string[] = [];
  /** Block names in entry order. */
  private order: string[] = [];
  private merged: DocumentCatalog | undefined;
  private mergedFor: CommittedState | undefined;

  private readonly base: SegmentSource;

  constructor(base: SegmentSource) {
    this.base = base;
  }

  get size(): number {
    return this.entries.length;
  }

  all(): readonly JournalEntry[] {
    return this.entries;
  }

  /** Forgets every entry (after a fold, or when the journal file changed). */
  reset(journal: string | null): void {
    this.journal = journal;
    this.end = 0;
    this.damaged = 0;
    this.entries = [];
    this.built = [];
    this.blocks.clear();
    this.blockDocs.clear();
    this.fresh = [];
    this.order = [];
    this.merged = undefined;
    this.mergedFor = undefined;
  }

  /**
   * Reads the journal lines appended since the last look: `read` when there were some, `missing` when the
   * journal file is not there (not written yet, or folded away by a newer commit).
   */
  async sync(persistence: Pick<Persistence, 'readJournal'>): Promise<'read' | 'none' | 'missing'> {
    const name = this.journal;
    if (name === null) return 'none';
    const from = this.end;
    const { lines, end, missing } = await persistence.readJournal(name, from);
    // A remember of this process (or another sync) moved the tail meanwhile: these lines are known.
    if (this.journal !== name || this.end !== from) return 'none';
    if (missing) {
      this.end = 0;
      return 'missing';
    }
    if (lines.length === 0 && end === from) return 'none';
    const { entries, damaged } = parseJournalLines(lines);
    this.damaged += damaged;
    this.add(entries, end);
    return 'read';
  }

  /** Adds entries read from the journal. */
  add(entries: JournalEntry[], end: number): void {
    this.end = end;
    if (entries.length === 0) return;
    this.entries.push(...entries);
    for (const e of entries) this.built.push(buildOne(e));
    // Only the open block is rebuilt on each remember; a closed block of 8 is built once, and one of 64
    // once per 64 memories, so the tail stays a few small segments without rebuilding much each time.
    const wanted = new Map(blockLayout(this.entries.length).map(([at, n]) => [`jrn-${at}-${n}`, [at, n]]));
    for (const name of [...this.blocks.keys()]) {
      if (!wanted.has(name)) {
        this.blocks.delete(name);
        this.blockDocs.delete(name);
      }
    }
    for (const [name, [at, n]] of wanted) {
      if (this.blocks.has(name)) continue;
      const built = tailBlock(name, this.built.slice(at!, at! + n!));
      this.blocks.set(name, built.segment);
      this.blockDocs.set(name, built.documents);
      this.fresh.push(name);
    }
    this.order = [...wanted.keys()];
  }

  /** The graph's view: the committed state plus the journaled memories. */
  view(state: CommittedState): GraphState {
    let names = this.fresh;
    if (this.mergedFor !== state || !this.merged) {
      this.merged = state.documents.copy();
      this.mergedFor = state;
      names = [...this.blocks.keys()];
    }
    // Documents of new blocks are (re)set: they name the block they now live in. The map is not copied.
    for (const name of names) for (const d of this.blockDocs.get(name) ?? []) this.merged.set(d.id, d);
    this.fresh = [];
    return {
      documents: this.merged,
      segments: [...state.segments, ...this.order],
      manual: state.manual,
      generation: state.generation * MAX_TAIL + this.entries.length,
      related: state.related,
    };
  }

  segment(name: string): Segment {
    return (name.startsWith('jrn-') ? this.blocks.get(name) : undefined) ?? this.base.segment(name);
  }
}

/** The memories of complete journal lines, and how many lines are not one (damage: a writer never writes them). */
export function parseJournalLines(lines: readonly string[]): { entries: JournalEntry[]; damaged: number } {
  const entries: JournalEntry[] = [];
  let damaged = 0;
  for (const line of lines) {
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      e = undefined;
    }
    if (isJournalEntry(e)) entries.push(e);
    else damaged++;
  }
  return { entries, damaged };
}
