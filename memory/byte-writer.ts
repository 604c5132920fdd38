/**
 * The growable byte buffer the store's binary forms are written with (postings lists, BM25 files, packed
 * document records), and the varint they share: an unsigned integer below 2^53, seven bits a byte, low
 * bits first, the high bit set on every byte but the last.
 */

/** Bytes written one after the other into a buffer that doubles when full; `take` gives them. */
export class ByteWriter {
  buf: Buffer;
  /** Bytes written so far. */
  pos = 0;

  constructor(initialBytes = 1 << 16) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Appends an unsigned integer (< 2^53) as a varint. */
  varint(value: number): void {
    this.ensure(8);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** The bytes written, a view of the buffer: valid until the next write. */
  take(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Reads the varint at `bytes[cursor.pos]` (not past `end`); returns the value and moves `cursor.pos` past it. */
export function readVarint(bytes: Uint8Array, cursor: { pos: number }, end: number): number {
  let v = 0;
  for (let shift = 1; cursor.pos < end; shift *= 0x80) {
    const b = bytes[cursor.pos++]!;
    v += (b & 0x7f) * shift;
    if (b < 0x80) break;
  }
  return v;
}
