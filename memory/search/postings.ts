/**
 * Postings lists: which chunks of a segment hold a term, and how often, in a few bytes per chunk.
 *
 * Layout of one list: varint(df), then per posting varint((gap - 1) * 2 + (tf > 1 ? 1 : 0)),
 * followed by varint(tf - 2) when that low bit is set. `gap` is the distance from the previous chunk
 * index (the first chunk counts from -1), so gaps are ≥ 1 and tf = 1, the common case, costs nothing.
 * Varints are little-endian base-128. A search decodes only the lists of its query terms.
 */
import { ByteWriter, readVarint } from '../byte-writer.ts';

/** A growable byte buffer for writing many postings lists back to back. */
export class PostingsWriter extends ByteWriter {
  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** Appends one postings list: `df` chunk indexes (increasing) and their term frequencies. */
  list(docs: ArrayLike<number>, tfs: ArrayLike<number>, df: number): void {
    // Worst case per posting: two 5-byte varints (values stay below 2^32).
    this.ensure(10 + df * 10);
    const buf = this.buf;
    let pos = this.pos;
    let v = df;
    while (v >= 0x80) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    let prev = -1;
    for (let i = 0; i < df; i++) {
      const doc = docs[i]!;
      const tf = tfs[i]!;
      v = (doc - prev - 1) * 2 + (tf > 1 ? 1 : 0);
      prev = doc;
      while (v >= 0x80) {
        buf[pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[pos++] = v;
      if (tf > 1) {
        v = tf - 2;
        while (v >= 0x80) {
          buf[pos++] = (v & 0x7f) | 0x80;
          v >>>= 7;
        }
        buf[pos++] = v;
      }
    }
    this.pos = pos;
  }

  /** Appends the first `length` bytes of `bytes`. */
  append(bytes: Uint8Array, length: number): void {
    this.raw(bytes.subarray(0, length));
  }

  /** Everything written, as a buffer of its own. */
  bytes(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** Everything written, as base64. */
  base64(): string {
    return this.buf.toString('base64', 0, this.pos);
  }
}

/** Reusable output arrays for {@link decodePostings}; they grow as needed. */
export class PostingsBuffer {
  docs = new Int32Array(1024);
  tfs = new Int32Array(1024);

  reserve(n: number): void {
    if (n <= this.docs.length) return;
    let size = this.docs.length;
    while (size < n) size *= 2;
    this.docs = new Int32Array(size);
    this.tfs = new Int32Array(size);
  }
}

/** The df at the head of the list in `bytes[start, end)`. */
export function postingsDf(bytes: Uint8Array, start: number, end: number): number {
  return readVarint(bytes, { pos: start }, end);
}

/**
 * Decodes the list in `bytes[start, end)` into `out.docs` / `out.tfs` and returns its length (df).
 * Damaged bytes yield the postings decoded before the damage, never an exception.
 */
export function decodePostings(bytes: Uint8Array, start: number, end: number, out: PostingsBuffer): number {
  let pos = start;
  // Varints are decoded inline: this loop is the hot path of every search.
  let df = 0;
  for (let shift = 1; pos < end; shift *= 0x80) {
    const b = bytes[pos++]!;
    df += (b & 0x7f) * shift;
    if (b < 0x80) break;
  }
  out.reserve(df);
  const docs = out.docs;
  const tfs = out.tfs;
  let doc = -1;
  let i = 0;
  while (i < df && pos < end) {
    let v = bytes[pos++]!;
    if (v >= 0x80) {
      v &= 0x7f;
      for (let shift = 0x80; pos < end; shift *= 0x80) {
        const b = bytes[pos++]!;
        v += (b & 0x7f) * shift;
        if (b < 0x80) break;
      }
    }
    doc += Math.floor(v / 2) + 1;
    let tf = 1;
    if (v % 2 === 1) {
      let extra = 0;
      for (let shift = 1; pos < end; shift *= 0x80) {
        const b = bytes[pos++]!;
        extra += (b & 0x7f) * shift;
        if (b < 0x80) break;
      }
      tf = extra + 2;
    }
    docs[i] = doc;
    tfs[i] = tf;
    i++;
  }
  return i;
}
