/**
 * Bytes read by offset: a segment file on disk, or the same bytes held in memory (an in-memory store, the
 * memory journal's tail). Readers of the binary segment files (memory/SCHEMA.md, schema 3) read only the
 * ranges a command needs through this, so a lookup in a 100M-token store reads kilobytes, not the store.
 *
 * Files keep their descriptor open between reads (a search reads a few blocks of every segment), up to
 * {@link MAX_OPEN} descriptors in the process: past it the least recently used one is closed and opened
 * again when next needed. Segment files are immutable by name, so a reopened file holds the same bytes.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { corrupt, isDenied, unreadable } from './corrupt.ts';

/** Read access to an immutable run of bytes. */
export interface Blob {
  /** Where the bytes live, for messages (a path, or a label for bytes in memory). */
  readonly name: string;
  /** Total length in bytes. */
  size(): number;
  /** `length` bytes from `offset` (fewer at the end). Immutable: do not write into it. */
  read(offset: number, length: number): Buffer;
  /**
   * Like {@link read}, into memory shared by every blob of the process: valid only until the next
   * `readTemp` anywhere, so the caller decodes it at once. Saves the garbage of a fresh buffer per read.
   */
  readTemp(offset: number, length: number): Buffer;
  /** Releases what the blob holds open (a file descriptor); reading again reopens. */
  close(): void;
}

/** Bytes in memory. */
export class BufferBlob implements Blob {
  readonly name: string;
  private readonly bytes: Buffer;

  constructor(bytes: Buffer, name = '(memory)') {
    this.bytes = bytes;
    this.name = name;
  }
  size(): number {
    return this.bytes.length;
  }
  read(offset: number, length: number): Buffer {
    return this.bytes.subarray(offset, Math.min(this.bytes.length, offset + length));
  }
  readTemp(offset: number, length: number): Buffer {
    return this.read(offset, length);
  }
  close(): void {}
}

/** The memory behind {@link FileBlob.readTemp}: grown as needed, shrunk back after a big read. */
let scratch = Buffer.allocUnsafe(1 << 20);
const SCRATCH_KEEP = 8 << 20;

/** Descriptors kept open across the process; Windows cannot delete a file that is open, so it keeps none. */
const MAX_OPEN = process.platform === 'win32' ? 0 : 192;
/** Open file blobs, least recently used first (a Map keeps insertion order). */
const open = new Map<FileBlob, true>();

/** A file read with positioned reads. */
export class FileBlob implements Blob {
  readonly name: string;
  private fd = -1;
  private length = -1;

  constructor(path: string) {
    this.name = path;
  }

  private descriptor(): number {
    if (this.fd >= 0) {
      open.delete(this);
      open.set(this, true);
      return this.fd;
    }
    let fd: number;
    try {
      fd = openSync(this.name, 'r');
    } catch (err) {
      // STORE_CORRUPT naming the file, not a bare errno: a store read that meets it under a manifest that
      // has moved on reads again (base-store.ts `reading`), and under one that has not, repair is the way out.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw corrupt(this.name, 'file is missing');
      if (isDenied(code)) throw unreadable(this.name, code!);
      throw err;
    }
    if (this.length < 0) this.length = fstatSync(fd).size;
    if (MAX_OPEN === 0) return fd;
    this.fd = fd;
    open.set(this, true);
    if (open.size > MAX_OPEN) open.keys().next().value?.close();
    return fd;
  }

  size(): number {
    if (this.length < 0) this.release(this.descriptor());
    return this.length;
  }

  read(offset: number, length: number): Buffer {
    const n = Math.max(0, Math.min(length, this.size() - offset));
    return this.readIntoBuffer(Buffer.allocUnsafe(n), offset, n);
  }

  readTemp(offset: number, length: number): Buffer {
    const n = Math.max(0, Math.min(length, this.size() - offset));
    if (n > scratch.length || (scratch.length > SCRATCH_KEEP && n <= SCRATCH_KEEP))
      scratch = Buffer.allocUnsafe(Math.max(n, 1 << 20));
    return this.readIntoBuffer(scratch, offset, n);
  }

  private readIntoBuffer(out: Buffer, offset: number, n: number): Buffer {
    const fd = this.descriptor();
    try {
      let done = 0;
      while (done < n) {
        const got = readSync(fd, out, done, n - done, offset + done);
        if (got === 0) break;
        done += got;
      }
      return out.subarray(0, done);
    } finally {
      this.release(fd);
    }
  }

  /** Closes a descriptor that was opened for one read only (no descriptors kept). */
  private release(fd: number): void {
    if (fd !== this.fd) closeSync(fd);
  }

  close(): void {
    if (this.fd < 0) return;
    open.delete(this);
    const fd = this.fd;
    this.fd = -1;
    closeSync(fd);
  }
}
