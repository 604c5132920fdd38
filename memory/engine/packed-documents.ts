/**
 * Document records packed into bytes, for {@link ./catalog.ts}: each record's id and its compact form
 * (./record-codec.ts) in shared append-only arenas, with typed arrays for the fields a lookup needs
 * (segment, first chunk, chunk count) and an open-addressing table from id to slot. A packed set is
 * immutable; a newer one shares the arenas of the one it was folded from and writes only its new records.
 */
import { fnv1a } from '../fnv.ts';
import type { DocumentRecord } from '../types.ts';
import { decodeRecord, encodeRecord, isWide, Names } from './record-codec.ts';

/**
 * Bytes an arena reserves. Arenas live as long as the store's state, while everything an ingest allocates
 * around them dies within a segment. malloc serves a block this large (past glibc's largest mmap threshold)
 * from a mapping of its own, whose pages become resident only as records are written into them: an arena
 * then neither pins malloc's heap under it nor costs memory it has not used.
 */
const ARENA_BYTES = 32 << 20;

/** Where {@link Arenas.write} put a record. */
interface Placed {
  arena: number;
  offset: number;
  /** The id's length in code units, negated when it is stored two bytes a unit. */
  idUnits: number;
  bodyBytes: number;
}

/** Append-only byte storage shared by every packed set of one lineage; bytes once written never change. */
class Arenas {
  readonly buffers: Buffer[] = [];
  private tail = ARENA_BYTES;
  /** Bytes written, those of records replaced or removed since included. */
  written = 0;

  /** Writes `id` (one byte a code unit when it can, else two: lossless either way) then `body`. */
  write(id: string, body: Buffer): Placed {
    const wide = isWide(id);
    const idBytes = wide ? id.length * 2 : id.length;
    const need = idBytes + body.length;
    if (this.tail + need > (this.buffers.at(-1)?.length ?? 0)) {
      this.buffers.push(Buffer.allocUnsafe(Math.max(ARENA_BYTES, need)));
      this.tail = 0;
    }
    const arena = this.buffers.length - 1;
    const buf = this.buffers[arena]!;
    const offset = this.tail;
    buf.write(id, offset, wide ? 'utf16le' : 'latin1');
    body.copy(buf, offset + idBytes);
    this.tail += need;
    this.written += need;
    return { arena, offset, idUnits: wide ? -id.length : id.length, bodyBytes: body.length };
  }
}

/** FNV-1a of `id` as a signed 32-bit number; never 0. */
function idHash(id: string): number {
  const h = fnv1a(id) | 0;
  return h === 0 ? 1 : h;
}

/** What {@link PackedDocuments.build} takes per record: a stored slot to carry over, or a record to write. */
export type PackSource = { from: PackedDocuments; slot: number } | { record: DocumentRecord; stamp: number };

/** Fields of a slot in {@link PackedDocuments}' index, one Int32Array with a stride. */
const ARENA = 0;
const OFFSET = 1;
const ID_UNITS = 2;
const BODY_BYTES = 3;
const HASH = 4;
const SEGMENT = 5;
const FIRST = 6;
const CHUNKS = 7;
const STRIDE = 8;

export class PackedDocuments {
  readonly size: number;
  readonly arenas: Arenas;
  /** Segment names, key shapes and other repeated strings of the records, by number. */
  readonly names: Names;
  private live = 0;
  private readonly fields: Int32Array;
  private readonly stamps: Float64Array;
  private readonly table: Int32Array;

  private constructor(size: number, arenas: Arenas, names: Names) {
    this.size = size;
    this.arenas = arenas;
    this.names = names;
    this.fields = new Int32Array(size * STRIDE);
    this.stamps = new Float64Array(size);
    let cap = 16;
    while (cap < size * 2) cap *= 2;
    this.table = new Int32Array(cap);
  }

  /** The set with no record, shared: nothing is ever written into its arenas (see {@link build}). */
  static readonly EMPTY = new PackedDocuments(0, new Arenas(), new Names());

  /** Bytes of live records (id and compact form): what a repack would keep. */
  get liveBytes(): number {
    return this.live;
  }

  /**
   * A packed set of `sources` in that order. Carried slots keep their bytes (no copy) unless `repack`,
   * which writes every record into fresh arenas (dropping the bytes of records no longer referred to).
   * A set folded from an empty one starts arenas and segment names of its own: it has nothing to share.
   */
  static build(sources: readonly PackSource[], base: PackedDocuments, repack = false): PackedDocuments {
    const arenas = repack || base.size === 0 ? new Arenas() : base.arenas;
    const names = base.size === 0 ? new Names() : base.names;
    let live = 0;
    const out = new PackedDocuments(sources.length, arenas, names);
    const f = out.fields;
    for (let slot = 0; slot < sources.length; slot++) {
      const s = sources[slot]!;
      const at = slot * STRIDE;
      if ('from' in s && !repack) {
        const from = s.from.fields;
        const k = s.slot * STRIDE;
        for (let i = 0; i < STRIDE; i++) f[at + i] = from[k + i]!;
        out.stamps[slot] = s.from.stamps[s.slot]!;
      } else {
        const record = 'from' in s ? s.from.record(s.slot) : s.record;
        const where = arenas.write(record.id, encodeRecord(record, names));
        f[at + ARENA] = where.arena;
        f[at + OFFSET] = where.offset;
        f[at + ID_UNITS] = where.idUnits;
        f[at + BODY_BYTES] = where.bodyBytes;
        f[at + HASH] = idHash(record.id);
        f[at + SEGMENT] = names.number(record.segment);
        f[at + FIRST] = record.first;
        f[at + CHUNKS] = record.chunks;
        out.stamps[slot] = 'from' in s ? s.from.stamps[s.slot]! : s.stamp;
      }
      live += idBytes(f[at + ID_UNITS]!) + f[at + BODY_BYTES]!;
      out.insert(slot);
    }
    out.live = live;
    return out;
  }

  private insert(slot: number): void {
    const mask = this.table.length - 1;
    let i = this.fields[slot * STRIDE + HASH]! & mask;
    while (this.table[i] !== 0) i = (i + 1) & mask;
    this.table[i] = slot + 1;
  }

  /** The slot of `id`, or -1. */
  slotOf(id: string): number {
    if (this.size === 0) return -1;
    const h = idHash(id);
    const mask = this.table.length - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const e = this.table[i]!;
      if (e === 0) return -1;
      const slot = e - 1;
      if (this.fields[slot * STRIDE + HASH] === h && this.idIs(slot, id)) return slot;
    }
  }

  private idIs(slot: number, id: string): boolean {
    const f = this.fields;
    const units = f[slot * STRIDE + ID_UNITS]!;
    const buf = this.arenas.buffers[f[slot * STRIDE + ARENA]!]!;
    const at = f[slot * STRIDE + OFFSET]!;
    if (units < 0) return -units === id.length && buf.toString('utf16le', at, at - 2 * units) === id;
    if (units !== id.length) return false;
    // One byte a code unit: compared in place, with no string made.
    for (let i = 0; i < units; i++) if (buf[at + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  id(slot: number): string {
    const f = this.fields;
    const units = f[slot * STRIDE + ID_UNITS]!;
    const at = f[slot * STRIDE + OFFSET]!;
    const buf = this.arenas.buffers[f[slot * STRIDE + ARENA]!]!;
    return units < 0 ? buf.toString('utf16le', at, at - 2 * units) : buf.toString('latin1', at, at + units);
  }

  /** A new object each call: records are values, never changed in place. */
  record(slot: number): DocumentRecord {
    const f = this.fields;
    const at = f[slot * STRIDE + OFFSET]! + idBytes(f[slot * STRIDE + ID_UNITS]!);
    return decodeRecord(this.id(slot), this.arenas.buffers[f[slot * STRIDE + ARENA]!]!, at, this.names);
  }

  segment(slot: number): string {
    return this.names.name(this.fields[slot * STRIDE + SEGMENT]!);
  }

  first(slot: number): number {
    return this.fields[slot * STRIDE + FIRST]!;
  }

  chunks(slot: number): number {
    return this.fields[slot * STRIDE + CHUNKS]!;
  }

  stamp(slot: number): number {
    return this.stamps[slot]!;
  }
}

function idBytes(units: number): number {
  return units < 0 ? -2 * units : units;
}
