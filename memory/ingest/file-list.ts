/**
 * The files an ingest will read, held compactly for as long as it runs.
 *
 * Why: a scan's list of `{ path, bytes }` objects costs about 130 bytes a file of the JavaScript heap
 * (4.5 MB for 36,000 files), and an ingest keeps it to its end. With the heap held near what is alive
 * (core/batch-heap.ts), that was a part of the peak RSS that grew with the corpus and not with the work
 * in flight. Sorted paths share most of their beginning with the one before, so each is kept as the length
 * of that shared beginning and the rest of it (front coding), the rests in one string: 0.5 MB for those
 * 36,000 files. Paths are made again, in order, each time the list is walked.
 */

/** A file to read: absolute path and size in bytes at scan time. */
export interface ListedFile {
  path: string;
  bytes: number;
}

/** Longest beginning a path shares with the one before that {@link FileList} records (Uint16Array). */
const MAX_SHARED = 0xffff;

/** Files in the order given, read front to back as many times as needed; never changed. */
export class FileList implements Iterable<ListedFile> {
  readonly length: number;
  /** Sum of the files' sizes. */
  readonly bytesTotal: number;
  /** Code units each path shares with the path before it. */
  private readonly shared: Uint16Array;
  /** What follows that shared beginning, for every path, one after the other. */
  private readonly rests: string;
  /** Code units of each path's rest. */
  private readonly restUnits: Uint32Array;
  private readonly sizes: Float64Array;

  private constructor(shared: Uint16Array, rests: string, restUnits: Uint32Array, sizes: Float64Array) {
    this.length = sizes.length;
    this.shared = shared;
    this.rests = rests;
    this.restUnits = restUnits;
    this.sizes = sizes;
    let total = 0;
    for (const b of sizes) total += b;
    this.bytesTotal = total;
  }

  /** A list of `files` (sorted paths share the most, but any order is kept as given). */
  static of(files: readonly ListedFile[]): FileList {
    const shared = new Uint16Array(files.length);
    const restUnits = new Uint32Array(files.length);
    const sizes = new Float64Array(files.length);
    const rests: string[] = [];
    let before = '';
    for (const [i, { path, bytes }] of files.entries()) {
      const limit = Math.min(before.length, path.length, MAX_SHARED);
      let n = 0;
      while (n < limit && before.charCodeAt(n) === path.charCodeAt(n)) n++;
      shared[i] = n;
      restUnits[i] = path.length - n;
      sizes[i] = bytes;
      rests.push(path.slice(n));
      before = path;
    }
    // One flat string, so the list holds no piece of the paths it was made from.
    return new FileList(shared, rests.join(''), restUnits, sizes);
  }

  /** The files with their place in the list. */
  *entries(): Generator<[number, ListedFile]> {
    let path = '';
    let at = 0;
    for (let i = 0; i < this.length; i++) {
      const end = at + this.restUnits[i]!;
      path = path.slice(0, this.shared[i]) + this.rests.slice(at, end);
      at = end;
      yield [i, { path, bytes: this.sizes[i]! }];
    }
  }

  *paths(): Generator<string> {
    for (const [, file] of this.entries()) yield file.path;
  }

  *[Symbol.iterator](): Generator<ListedFile> {
    for (const [, file] of this.entries()) yield file;
  }
}
