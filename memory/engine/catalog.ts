/**
 * The documents of a store state: a map from id to {@link DocumentRecord} that keeps its records packed
 * in bytes (./packed-documents.ts) rather than as objects, with the few records changed since the last
 * fold kept as objects on top.
 *
 * Why: a record as an object is about 0.5 KB of the JavaScript heap (the object, its id, path, hash and
 * time strings, its map entry), and it was the one thing an ingest kept that grew with the store. Objects
 * held on that heap cost an ingest more than their size (measured: 26 MB of record-like objects held
 * through a 100 MB ingest raised its peak RSS by 72 MB; 26 MB in a Buffer, by 23 MB). Packed, a record
 * is about 0.15 KB outside the heap (its compact form, ./record-codec.ts, and 32 bytes of index). Records
 * are packed only as an ingest commits (`copy(true)`): a reader that opened the store keeps them as the
 * objects it read.
 *
 * A state's catalog is never changed once committed: a commit takes a {@link DocumentCatalog.copy},
 * which shares the packed records and copies only the recent ones, and changes that.
 */
import type { DocumentRecord } from '../types.ts';
import { PackedDocuments, type PackSource } from './packed-documents.ts';

/** Records kept as objects before a copy folds them into a new packed set. */
const FOLD_AT = 2048;
/**
 * A fold writes the live records afresh once the arenas hold more than this many times the live records'
 * bytes (plus 1 MiB): the rest are replaced or removed ones.
 */
const REPACK_SLACK = 2;

let lastStamp = 0;

/** A record changed since the last fold, with the stamp that tells versions apart. */
type Stamped = { record: DocumentRecord; stamp: number };
/** A recent entry; null: the packed record of that id is removed. */
type Recent = Stamped | null;
/** A live entry, in iteration order: a packed slot, or a recent record with its id. */
type Live = number | readonly [string, Stamped];

/** Where a document's chunks are, read without decoding its record. */
export interface DocumentPlace {
  segment: string;
  first: number;
  chunks: number;
}

/** What code that reads and moves records needs of a catalog; a `Map` by id is one too. */
export interface DocumentMap extends Iterable<[string, DocumentRecord]> {
  readonly size: number;
  get(id: string): DocumentRecord | undefined;
  has(id: string): boolean;
  set(id: string, record: DocumentRecord): unknown;
  values(): Iterable<DocumentRecord>;
}

export class DocumentCatalog implements DocumentMap {
  private base: PackedDocuments;
  private recent: Map<string, Recent>;
  private count: number;
  /** The packed set {@link copy} folded this catalog into: a second copy reuses it instead of writing the records again. */
  private folded: PackedDocuments | undefined;

  /**
   * A catalog of `records` (the last of one id wins). They stay objects until a copy folds them: a reader
   * that only opened the store never packs them.
   */
  constructor(records?: Iterable<DocumentRecord>) {
    this.base = PackedDocuments.EMPTY;
    this.recent = new Map();
    for (const record of records ?? []) this.recent.set(record.id, { record, stamp: ++lastStamp });
    this.count = this.recent.size;
    this.folded = undefined;
  }

  private static over(base: PackedDocuments, recent: Map<string, Recent>, count: number): DocumentCatalog {
    const c = new DocumentCatalog();
    c.base = base;
    c.recent = recent;
    c.count = count;
    return c;
  }

  get size(): number {
    return this.count;
  }

  has(id: string): boolean {
    const r = this.recent.get(id);
    if (r !== undefined) return r !== null;
    return this.base.slotOf(id) >= 0;
  }

  /** The record of `id`; one from the packed part is a new object at each call. */
  get(id: string): DocumentRecord | undefined {
    const r = this.recent.get(id);
    if (r !== undefined) return r?.record;
    const slot = this.base.slotOf(id);
    return slot < 0 ? undefined : this.base.record(slot);
  }

  /** Segment, first chunk and chunk count of `id`, without decoding its record. */
  place(id: string): DocumentPlace | undefined {
    const r = this.recent.get(id);
    if (r !== undefined) {
      if (r === null) return undefined;
      const { segment, first, chunks } = r.record;
      return { segment, first, chunks };
    }
    const slot = this.base.slotOf(id);
    if (slot < 0) return undefined;
    return { segment: this.base.segment(slot), first: this.base.first(slot), chunks: this.base.chunks(slot) };
  }

  /** The segment holding `id`'s chunks. */
  segmentOf(id: string): string | undefined {
    const r = this.recent.get(id);
    if (r !== undefined) return r?.record.segment;
    const slot = this.base.slotOf(id);
    return slot < 0 ? undefined : this.base.segment(slot);
  }

  set(id: string, record: DocumentRecord): this {
    this.folded = undefined;
    if (!this.has(id)) this.count++;
    this.recent.set(id, { record, stamp: ++lastStamp });
    return this;
  }

  delete(id: string): boolean {
    if (!this.has(id)) return false;
    this.folded = undefined;
    this.count--;
    if (this.base.slotOf(id) >= 0) this.recent.set(id, null);
    else this.recent.delete(id);
    return true;
  }

  /**
   * A catalog to change for the next state, sharing this one's records. With `pack` (a writer that keeps
   * committing: an ingest), once enough records are kept as objects they are folded into a new packed set
   * (this catalog keeps its own); without, the objects are shared as they are, as a reader's view needs.
   */
  copy(pack = false): DocumentCatalog {
    if (!pack || this.recent.size < FOLD_AT)
      return DocumentCatalog.over(this.base, new Map(this.recent), this.count);
    if (this.folded) return DocumentCatalog.over(this.folded, new Map(), this.count);
    const sources: PackSource[] = [];
    for (const e of this.live()) sources.push(typeof e === 'number' ? { from: this.base, slot: e } : e[1]);
    const arenas = this.base.arenas;
    const repack = arenas.written > REPACK_SLACK * (this.base.liveBytes + 1024 * 1024);
    this.folded = PackedDocuments.build(sources, this.base, repack);
    return DocumentCatalog.over(this.folded, new Map(), this.count);
  }

  /** A number that changes whenever `id`'s record is set again; 0 when absent. */
  private stampOf(id: string): number {
    const r = this.recent.get(id);
    if (r !== undefined) return r === null ? 0 : r.stamp;
    const slot = this.base.slotOf(id);
    return slot < 0 ? 0 : this.base.stamp(slot);
  }

  /**
   * The records set since `before` (an earlier state this one was copied from, directly or not), and the
   * ids it had that this one has not. Unrelated catalogs compare every record.
   */
  changesSince(before: DocumentCatalog): { put: DocumentRecord[]; remove: string[] } {
    const put: DocumentRecord[] = [];
    const remove: string[] = [];
    if (before.base === this.base) {
      // Only the recent records can differ.
      const ids = new Set([...this.recent.keys(), ...before.recent.keys()]);
      for (const id of ids) {
        const now = this.stampOf(id);
        if (now === before.stampOf(id)) continue;
        if (now === 0) remove.push(id);
        else put.push(this.get(id)!);
      }
      return { put, remove };
    }
    for (const e of this.live()) {
      if (typeof e !== 'number') {
        if (before.stampOf(e[0]) !== e[1].stamp) put.push(e[1].record);
      } else if (before.stampOf(this.base.id(e)) !== this.base.stamp(e)) put.push(this.base.record(e));
    }
    for (const id of before.keys()) if (!this.has(id)) remove.push(id);
    return { put, remove };
  }

  /** The live entries in iteration order: packed slots (those no recent entry overrides), then recent records of ids not packed. */
  private *live(): Generator<Live> {
    const base = this.base;
    // One lookup per recent id: it overrides a packed slot (marked), or it is a record of its own.
    const marks = this.recent.size > 0 ? new Uint8Array(base.size) : null;
    const own: [string, Stamped][] = [];
    for (const [id, r] of this.recent) {
      const slot = base.slotOf(id);
      if (slot >= 0) marks![slot] = 1;
      else if (r !== null) own.push([id, r]);
    }
    for (let slot = 0; slot < base.size; slot++) {
      if (marks?.[slot] !== 1) yield slot;
      else {
        const id = base.id(slot);
        const r = this.recent.get(id)!;
        if (r !== null) yield [id, r];
      }
    }
    yield* own;
  }

  /** The segments holding at least one document's chunks (of any document, even one with no chunk). */
  segments(): Set<string> {
    const out = new Set<string>();
    for (const e of this.live()) out.add(typeof e === 'number' ? this.base.segment(e) : e[1].record.segment);
    return out;
  }

  /** Live chunks per segment (of the segments holding any document), without decoding records. */
  chunksBySegment(): Map<string, number> {
    const out = new Map<string, number>();
    for (const e of this.live()) {
      const [segment, chunks] =
        typeof e === 'number'
          ? [this.base.segment(e), this.base.chunks(e)]
          : [e[1].record.segment, e[1].record.chunks];
      out.set(segment, (out.get(segment) ?? 0) + chunks);
    }
    return out;
  }

  *entries(): Generator<[string, DocumentRecord]> {
    for (const e of this.live())
      yield typeof e === 'number' ? [this.base.id(e), this.base.record(e)] : [e[0], e[1].record];
  }

  *keys(): Generator<string> {
    for (const e of this.live()) yield typeof e === 'number' ? this.base.id(e) : e[0];
  }

  *values(): Generator<DocumentRecord> {
    for (const e of this.live()) yield typeof e === 'number' ? this.base.record(e) : e[1].record;
  }

  [Symbol.iterator](): Generator<[string, DocumentRecord]> {
    return this.entries();
  }
}
