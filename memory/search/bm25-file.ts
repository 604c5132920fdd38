/**
 * A segment's BM25 index as a binary file, `seg-N.bm25` (schema 3, memory/SCHEMA.md), read in pieces: a
 * lookup reads one dictionary block of 64 terms and the term's postings list, so a search over a
 * 100M-token store reads a few kilobytes per segment instead of parsing every index whole.
 *
 * Layout: the framed header region (memory/binary.ts) holds the counts, every chunk's analysed length,
 * where each dictionary block starts, its CRC-32 and its first term. The body holds the dictionary
 * blocks (per term: UTF-8 bytes, df, the postings list's length and either the list itself, when short,
 * or its CRC-32), then the long postings lists in term order, then the terms again, bucketed by length
 * with their letter masks (the typo lookup, fuzzy.ts): a misspelt word reads only the buckets of its
 * length give or take the edits allowed, each with its CRC-32. Every byte a reader uses is checked
 * against a CRC before use; a mismatch is {@link DamagedFile}, which the store reports as STORE_CORRUPT.
 */

import { lastAtMost } from '../../core/last-at-most.ts';
import { crc32, DamagedFile, framedFrom, Layout, readFramed, Sections } from '../binary.ts';
import type { Blob } from '../blob.ts';
import { ByteWriter, readVarint } from '../byte-writer.ts';
import { ANALYZER_VERSION } from './analyzer.ts';
import { damerauLevenshtein, type FuzzyMatch, letterMask, popcount } from './fuzzy.ts';
import { decodePostings, type PostingsBuffer } from './postings.ts';
import type { SegmentTerms } from './segment.ts';

const BM25_FILE_MAGIC = 'rlmbm25\n';
const VERSION = 3;
const BLOCK = 64;
/** Postings lists up to this many bytes sit in their dictionary entry, under the block's CRC. */
const INLINE = 16;

/** The BM25 file's writer: varints, raw bytes, UTF-8 strings and 32-bit integers. */
class Bytes extends ByteWriter {
  /** A string as its UTF-8 length (varint) and bytes. */
  text(value: string): void {
    const n = Buffer.byteLength(value, 'utf8');
    this.varint(n);
    this.ensure(n);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }
  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }
}

/** The file's bytes for a segment's analysed terms: the framed header, then the body. */
export function encodeBm25File(built: SegmentTerms): Buffer[] {
  const { terms, lists, ends } = built;
  const blocks = Math.ceil(terms.length / BLOCK);
  const dict = new Bytes();
  const long = new Bytes();
  const blockDict = new Uint32Array(blocks + 1);
  const blockPost = new Uint32Array(blocks + 1);
  const blockCrc = new Uint32Array(blocks);
  const keys: string[] = [];
  for (let b = 0; b < blocks; b++) {
    blockDict[b] = dict.pos;
    blockPost[b] = long.pos;
    keys.push(terms[b * BLOCK]!);
    for (let i = b * BLOCK; i < Math.min(terms.length, (b + 1) * BLOCK); i++) {
      const from = i === 0 ? 0 : ends[i - 1]!;
      const list = lists.subarray(from, ends[i]!);
      dict.text(terms[i]!);
      dict.varint(readVarint(list, { pos: 0 }, list.length));
      dict.varint(list.length);
      if (list.length <= INLINE) dict.raw(list);
      else {
        dict.u32(crc32(list));
        long.raw(list);
      }
    }
    blockCrc[b] = crc32(dict.buf.subarray(blockDict[b]!, dict.pos));
  }
  blockDict[blocks] = dict.pos;
  blockPost[blocks] = long.pos;
  const fuzzy = fuzzyBuckets(terms);
  let totalLength = 0;
  for (const n of built.lengths) totalLength += n;
  const head = new Layout()
    .u32([VERSION, ANALYZER_VERSION, built.lengths.length, terms.length, blocks])
    .f64([totalLength])
    .u32(built.lengths)
    .u32(blockDict)
    .u32(blockPost)
    .u32(blockCrc)
    .u32([dict.pos, long.pos, fuzzy.lengths.length])
    .u32(fuzzy.lengths)
    .u32(fuzzy.at)
    .u32(fuzzy.counts)
    .u32(fuzzy.crcs)
    .json(keys);
  return [head.frame(BM25_FILE_MAGIC), dict.take(), long.take(), ...fuzzy.parts];
}

/**
 * The terms by length (UTF-16 units, as fuzzy.ts measures them), one bucket per length: the masks, where
 * each term's bytes end, then the bytes. `at` has one more entry than there are buckets: the end.
 */
function fuzzyBuckets(terms: readonly string[]): {
  lengths: number[];
  at: number[];
  counts: number[];
  crcs: number[];
  parts: Buffer[];
} {
  const byLength = new Map<number, string[]>();
  for (const t of terms) {
    const list = byLength.get(t.length);
    if (list) list.push(t);
    else byLength.set(t.length, [t]);
  }
  const out = {
    lengths: [] as number[],
    at: [0],
    counts: [] as number[],
    crcs: [] as number[],
    parts: [] as Buffer[],
  };
  for (const len of [...byLength.keys()].sort((a, b) => a - b)) {
    const list = byLength.get(len)!;
    const n = list.length;
    let text = 0;
    for (const t of list) text += Buffer.byteLength(t, 'utf8');
    // Masks, ends, then the bytes, padded to 4: one buffer per bucket.
    const bucket = Buffer.alloc(8 * n + text + ((4 - (text % 4)) % 4));
    let at = 8 * n;
    list.forEach((t, i) => {
      bucket.writeUInt32LE(letterMask(t) >>> 0, 4 * i);
      at += bucket.write(t, at, 'utf8');
      bucket.writeUInt32LE(at - 8 * n, 4 * (n + i));
    });
    out.lengths.push(len);
    out.counts.push(n);
    out.crcs.push(crc32(bucket));
    out.at.push(out.at[out.at.length - 1]! + bucket.length);
    out.parts.push(bucket);
  }
  return out;
}

/** A term found in a segment: its df and where its postings list is. */
export interface TermHit {
  df: number;
  /** Decodes the postings into `out`; returns their count. */
  postings(out: PostingsBuffer): number;
}

/** A decoded dictionary block: its terms, dfs and the postings lists they point at. */
interface Block {
  /** The block's bytes (short lists are read from here). */
  bytes: Buffer;
  terms: string[];
  dfs: number[];
  /** Where each list is: in `bytes` for a short one, else from the postings area's start. */
  at: number[];
  len: number[];
  /** CRC of a list in the postings area; -1 for a short one (the block's CRC covers it). */
  crc: number[];
}

/** Blocks kept decoded per reader: a search reads the same few blocks again and again. */
const BLOCK_CACHE = 64;

/** Reads a `seg-N.bm25` file through a {@link Blob}. Throws {@link DamagedFile} on bytes that do not check out. */
export class Bm25File {
  readonly analyzer: number;
  readonly chunkCount: number;
  readonly termCount: number;
  readonly totalLength: number;
  readonly lengths: Uint32Array;
  private readonly blob: Blob;
  private readonly keys: string[];
  private readonly blockDict: Uint32Array;
  private readonly blockPost: Uint32Array;
  private readonly blockCrc: Uint32Array;
  private readonly dictStart: number;
  private readonly postStart: number;
  private readonly fuzzyStart: number;
  private readonly fuzzyLengths: Uint32Array;
  private readonly fuzzyAt: Uint32Array;
  private readonly fuzzyCounts: Uint32Array;
  private readonly fuzzyCrcs: Uint32Array;
  private readonly blocks = new Map<number, Block>();

  constructor(blob: Blob, first?: Buffer) {
    this.blob = blob;
    const { header, body } = first ? framedFrom(first, BM25_FILE_MAGIC) : readFramed(blob, BM25_FILE_MAGIC);
    const s = new Sections(header);
    const [version, analyzer, chunks, terms, blocks] = [s.one(), s.one(), s.one(), s.one(), s.one()];
    if (version !== VERSION) throw new DamagedFile(`unknown BM25 file version ${version}`);
    this.analyzer = analyzer;
    this.chunkCount = chunks;
    this.termCount = terms;
    this.totalLength = s.f64(1)[0]!;
    this.lengths = s.u32(chunks);
    this.blockDict = s.u32(blocks + 1);
    this.blockPost = s.u32(blocks + 1);
    this.blockCrc = s.u32(blocks);
    const [dictBytes, postBytes, lengths] = [s.one(), s.one(), s.one()];
    this.fuzzyLengths = s.u32(lengths);
    this.fuzzyAt = s.u32(lengths + 1);
    this.fuzzyCounts = s.u32(lengths);
    this.fuzzyCrcs = s.u32(lengths);
    this.keys = s.json<string[]>();
    if (!Array.isArray(this.keys) || this.keys.length !== blocks) throw new DamagedFile('bad block table');
    this.dictStart = body;
    this.postStart = body + dictBytes;
    this.fuzzyStart = this.postStart + postBytes;
  }

  private block(b: number): Block {
    const cached = this.blocks.get(b);
    if (cached) return cached;
    const from = this.blockDict[b]!;
    const to = this.blockDict[b + 1]!;
    const bytes = this.blob.read(this.dictStart + from, to - from);
    if (bytes.length !== to - from || crc32(bytes) !== this.blockCrc[b])
      throw new DamagedFile(`dictionary block ${b} fails its CRC check`);
    const block: Block = { bytes, terms: [], dfs: [], at: [], len: [], crc: [] };
    const cursor = { pos: 0 };
    let post = this.blockPost[b]!;
    while (cursor.pos < bytes.length) {
      const n = readVarint(bytes, cursor, bytes.length);
      block.terms.push(bytes.toString('utf8', cursor.pos, cursor.pos + n));
      cursor.pos += n;
      block.dfs.push(readVarint(bytes, cursor, bytes.length));
      const len = readVarint(bytes, cursor, bytes.length);
      block.len.push(len);
      if (len <= INLINE) {
        block.at.push(cursor.pos);
        block.crc.push(-1);
        cursor.pos += len;
      } else {
        block.at.push(post);
        block.crc.push(bytes.readUInt32LE(cursor.pos));
        cursor.pos += 4;
        post += len;
      }
    }
    if (this.blocks.size >= BLOCK_CACHE) this.blocks.delete(this.blocks.keys().next().value!);
    this.blocks.set(b, block);
    return block;
  }

  private hit(block: Block, i: number): TermHit {
    return { df: block.dfs[i]!, postings: (out) => this.decode(block, i, out) };
  }

  private decode(block: Block, i: number, out: PostingsBuffer): number {
    const bytes = this.listBytes(block, i);
    return decodePostings(bytes, 0, bytes.length, out);
  }

  /** The postings list of term `i` of `block`, checked against its CRC. */
  private listBytes(block: Block, i: number): Buffer {
    const len = block.len[i]!;
    if (block.crc[i] === -1) return block.bytes.subarray(block.at[i]!, block.at[i]! + len);
    const bytes = this.blob.readTemp(this.postStart + block.at[i]!, len);
    if (bytes.length !== len || crc32(bytes) !== block.crc[i])
      throw new DamagedFile(`the postings of "${block.terms[i]}" fail their CRC check`);
    return bytes;
  }

  /** The term's df and postings, or undefined when the segment does not have it. */
  find(term: string): TermHit | undefined {
    const keys = this.keys;
    // The last block whose first term is <= term.
    const lo = lastAtMost(keys, term);
    if (keys.length === 0 || keys[lo]! > term) return undefined;
    const block = this.block(lo);
    const i = block.terms.indexOf(term);
    return i < 0 ? undefined : this.hit(block, i);
  }

  /** Every term with its df, in vocabulary order. */
  *terms(): Generator<[term: string, df: number]> {
    for (let b = 0; b < this.keys.length; b++) {
      const block = this.block(b);
      for (let i = 0; i < block.terms.length; i++) yield [block.terms[i]!, block.dfs[i]!];
    }
  }

  /** Terms of this segment within `maxDistance` edits of `term` (not `term` itself). */
  near(term: string, maxDistance: number): FuzzyMatch[] {
    const out: FuzzyMatch[] = [];
    const mask = letterMask(term);
    const maxBits = 2 * maxDistance;
    this.buckets(term.length - maxDistance, term.length + maxDistance, (bucket, n) => {
      const text = 8 * n;
      for (let i = 0; i < n; i++) {
        if (popcount(mask ^ bucket.readUInt32LE(4 * i)) > maxBits) continue;
        const from = i === 0 ? 0 : bucket.readUInt32LE(4 * (n + i - 1));
        const candidate = bucket.toString('utf8', text + from, text + bucket.readUInt32LE(4 * (n + i)));
        if (candidate === term) continue;
        const distance = damerauLevenshtein(term, candidate, maxDistance);
        if (distance <= maxDistance) out.push({ term: candidate, distance });
      }
    });
    return out;
  }

  /**
   * Calls `each` with every typo-lookup bucket of terms `min` to `max` units long, checked against its
   * CRC (valid only during the call), and its term count. The buckets are one run of the file: one read.
   */
  private buckets(min: number, max: number, each: (bucket: Buffer, count: number) => void): void {
    const lengths = this.fuzzyLengths;
    let first = 0;
    while (first < lengths.length && lengths[first]! < min) first++;
    let last = first;
    while (last < lengths.length && lengths[last]! <= max) last++;
    if (first === last) return;
    const base = this.fuzzyAt[first]!;
    const bytes = this.blob.readTemp(this.fuzzyStart + base, this.fuzzyAt[last]! - base);
    for (let b = first; b < last; b++) {
      const bucket = bytes.subarray(this.fuzzyAt[b]! - base, this.fuzzyAt[b + 1]! - base);
      if (bucket.length !== this.fuzzyAt[b + 1]! - this.fuzzyAt[b]! || crc32(bucket) !== this.fuzzyCrcs[b])
        throw new DamagedFile(`the typo lookup of length ${lengths[b]} fails its CRC check`);
      each(bucket, this.fuzzyCounts[b]!);
    }
  }

  /** Checks every byte of the file against its CRCs (repair); throws {@link DamagedFile}. */
  verify(): void {
    for (let b = 0; b < this.keys.length; b++) {
      const block = this.block(b);
      for (let i = 0; i < block.terms.length; i++) this.listBytes(block, i);
    }
    this.buckets(0, Number.MAX_SAFE_INTEGER, () => {});
    const end = this.fuzzyStart + this.fuzzyAt[this.fuzzyLengths.length]!;
    if (this.blob.size() !== end) throw new DamagedFile(`the file should be ${end} bytes long`);
  }
}
