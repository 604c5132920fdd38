/**
 * The framing every binary segment file shares (memory/SCHEMA.md, schema 3): an 8-byte magic, the length
 * of a header region and its CRC-32, then the header region, then the file's body. Numbers are
 * little-endian; the sections of a header region start on 4-byte boundaries, so columns of 32-bit
 * integers are read as typed-array views without copying.
 */
import { crc32 } from 'node:zlib';
import type { Blob } from './blob.ts';

/** Bytes before a header region: magic (8), header length (4), header CRC-32 (4). */
const PREAMBLE = 16;
/** Read at once when a file is opened: most header regions fit, so opening costs one read. */
const FIRST_READ = 64 * 1024;

export { crc32 };

/** Numbers are stored little-endian; on such a machine (all Node runs on) typed arrays are written as they are. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** Unsigned 32-bit integers as little-endian bytes. */
export function u32Bytes(values: ArrayLike<number>): Buffer {
  if (LITTLE_ENDIAN) {
    const array = values instanceof Uint32Array ? values : Uint32Array.from(values as ArrayLike<number>);
    return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  }
  const out = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeUInt32LE(values[i]! >>> 0, i * 4);
  return out;
}

/** A file whose bytes do not check out; the caller turns it into STORE_CORRUPT naming the file. */
export class DamagedFile extends Error {}

/** Builds a header region section by section, each on a 4-byte boundary. */
export class Layout {
  private readonly parts: Buffer[] = [];
  private length = 0;

  /** Current length, the offset the next section starts at. */
  get size(): number {
    return this.length;
  }

  private push(bytes: Buffer): void {
    this.parts.push(bytes);
    this.length += bytes.length;
    const pad = (4 - (this.length % 4)) % 4;
    if (pad > 0) {
      this.parts.push(Buffer.alloc(pad));
      this.length += pad;
    }
  }

  u32(values: ArrayLike<number>): this {
    this.push(u32Bytes(values));
    return this;
  }

  u8(values: ArrayLike<number>): this {
    this.push(Buffer.from(values as ArrayLike<number> & Iterable<number>));
    return this;
  }

  f64(values: ArrayLike<number>): this {
    const out = Buffer.allocUnsafe(values.length * 8);
    for (let i = 0; i < values.length; i++) out.writeDoubleLE(values[i]!, i * 8);
    this.push(out);
    return this;
  }

  /** A length-prefixed UTF-8 JSON value (JSON keeps lone surrogates in strings, UTF-8 alone cannot). */
  json(value: unknown): this {
    const bytes = Buffer.from(JSON.stringify(value), 'utf8');
    this.u32([bytes.length]);
    this.push(bytes);
    return this;
  }

  bytes(value: Buffer): this {
    this.push(value);
    return this;
  }

  /** The file's first bytes: preamble and header region. */
  frame(magic: string): Buffer {
    const header = Buffer.concat(this.parts, this.length);
    const pre = Buffer.alloc(PREAMBLE);
    pre.write(magic, 0, 8, 'latin1');
    pre.writeUInt32LE(header.length, 8);
    pre.writeUInt32LE(crc32(header), 12);
    return Buffer.concat([pre, header]);
  }
}

/** Reads a header region back section by section, in the order a {@link Layout} wrote them. */
export class Sections {
  private at = 0;
  private readonly bytes: Buffer;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  private take(n: number): number {
    const start = this.at;
    if (start + n > this.bytes.length) throw new DamagedFile('the header ends early');
    this.at = start + n + ((4 - (n % 4)) % 4);
    return start;
  }

  u32(count: number): Uint32Array {
    const start = this.take(count * 4);
    const offset = this.bytes.byteOffset + start;
    if (LITTLE_ENDIAN && offset % 4 === 0) return new Uint32Array(this.bytes.buffer, offset, count);
    const out = new Uint32Array(count);
    for (let i = 0; i < count; i++) out[i] = this.bytes.readUInt32LE(start + i * 4);
    return out;
  }

  one(): number {
    return this.bytes.readUInt32LE(this.take(4));
  }

  u8(count: number): Uint8Array {
    const start = this.take(count);
    return this.bytes.subarray(start, start + count);
  }

  f64(count: number): Float64Array {
    const start = this.take(count * 8);
    const out = new Float64Array(count);
    for (let i = 0; i < count; i++) out[i] = this.bytes.readDoubleLE(start + i * 8);
    return out;
  }

  json<T>(): T {
    const n = this.one();
    const start = this.take(n);
    try {
      return JSON.parse(this.bytes.toString('utf8', start, start + n)) as T;
    } catch {
      throw new DamagedFile('the header does not parse');
    }
  }

  bytesOf(count: number): Buffer {
    const start = this.take(count);
    return this.bytes.subarray(start, start + count);
  }
}

/**
 * The header region of a framed file, checked against its CRC-32, and where the body starts. Throws
 * {@link DamagedFile} when the magic, the length or the CRC does not check out.
 */
export function readFramed(blob: Blob, magic: string): { header: Buffer; body: number } {
  const first = blob.read(0, FIRST_READ);
  return framedFrom(first, magic, (n) => blob.read(PREAMBLE, n));
}

/** {@link readFramed} over bytes already in hand (`bytes` starts at the file's start). */
export function framedFrom(
  first: Buffer,
  magic: string,
  more: (headerLength: number) => Buffer = () => first.subarray(PREAMBLE),
): { header: Buffer; body: number } {
  if (first.length < PREAMBLE || first.toString('latin1', 0, 8) !== magic)
    throw new DamagedFile(first.length < PREAMBLE ? 'the file is too short' : 'not a file of this kind');
  const n = first.readUInt32LE(8);
  const header = PREAMBLE + n <= first.length ? first.subarray(PREAMBLE, PREAMBLE + n) : more(n);
  if (header.length !== n) throw new DamagedFile('the header ends early');
  if (crc32(header) !== first.readUInt32LE(12)) throw new DamagedFile('the header fails its CRC check');
  // Typed-array views need their own 4-aligned copy when the bytes came out of a shared pool.
  let aligned = header;
  if (header.byteOffset % 4 !== 0) {
    aligned = Buffer.alloc(n);
    header.copy(aligned);
  }
  return { header: aligned, body: PREAMBLE + n };
}
