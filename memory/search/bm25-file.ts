/**
 * A segment's BM25 index as a binary file, `seg-N.bm25` (schema 3, memory/SCHEMA.md), read in pieces: a
 * lookup reads one dictionary block of 64 terms and the term's postings list, so a search over a
 * 100M-token store reads a few kilobytes per segment instead of parsing every index whole.
 *
 * Layout: the framed header region (memory/binary.ts) holds the counts, every chunk's analysed length,
 * where each dictionary block starts, its CRC-32 and its first term. The body holds the dictionary
 * blocks (per term: UTF-8 bytes, df, the postings list's length and either the list itself, when short,
 * or its CRC-32), then the long postings lists in term order, then each term's length and letter mask
 * (the typo lookup's filter, fuzzy.ts) with their CRC-32. Every byte a reader uses is checked against a
 * CRC before use; a mismatch is {@link DamagedFile}, which the store reports as STORE_CORRUPT.
 */
import type { Blob } from '../blob.ts';
import { crc32, DamagedFile, framedFrom, Layout, readFramed, Sections } from '../binary.ts';
import { ANALYZER_VERSION } from './analyzer.ts';
import { damerauLevenshtein, type FuzzyMatch, letterMask, popcount } from './fuzzy.ts';
import { decodePostings, type PostingsBuffer, readVarint } from './postings.ts';
import type { SegmentTerms } from './segment.ts';

export const BM25_FILE_MAGIC = 'rlmbm25\n';
const VERSION = 3;
const BLOCK = 64;
/** Postings lists up to this many bytes sit in their dictionary entry, under the block's CRC. */
const INLINE = 16;

/** Writes varints into a growable buffer. */
class Bytes {
  buf = Buffer.allocUnsafe(1 << 16);
  pos = 0;
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  varint(v: number): void {
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }
  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }
  take(): Buffer {
    return this.buf.subarray(0, this.pos);
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
  const lens = new Uint8Array(terms.length);
  const masks = new Uint32Array(terms.length);
  for (let b = 0; b < blocks; b++) {
    blockDict[b] = dict.pos;
    blockPost[b] = long.pos;
    keys.push(terms[b * BLOCK]!);
    for (let i = b * BLOCK; i < Math.min(terms.length, (b + 1) * BLOCK); i++) {
      const term = Buffer.from(terms[i]!, 'utf8');
      const from = i === 0 ? 0 : ends[i - 1]!;
      const list = lists.subarray(from, ends[i]!);
      dict.varint(term.length);
      dict.raw(term);
      dict.varint(readVarint(list, { pos: 0 }, list.length));
      dict.varint(list.length);
      if (list.length <= INLINE) dict.raw(list);
      else {
        dict.u32(crc32(list));
        long.raw(list);
      }
      lens[i] = Math.min(255, terms[i]!.length);
      masks[i] = letterMask(terms[i]!);
    }
    blockCrc[b] = crc32(dict.buf.subarray(blockDict[b]!, dict.pos));
  }
  blockDict[blocks] = dict.pos;
  blockPost[blocks] = long.pos;
  const fuzzy = Buffer.concat([Buffer.from(lens), Buffer.alloc((4 - (lens.length % 4)) % 4), u32Bytes(masks)]);
  let totalLength = 0;
  for (const n of built.lengths) totalLength += n;
  const head = new Layout()
    .u32([VERSION, ANALYZER_VERSION, built.lengths.length, terms.length, blocks])
    .f64([totalLength])
    .u32(built.lengths)
    .u32(blockDict)
    .u32(blockPost)
    .u32(blockCrc)
    .u32([dict.pos, long.pos, fuzzy.length, crc32(fuzzy)])
    .json(keys);
  return [head.frame(BM25_FILE_MAGIC), dict.take(), long.take(), fuzzy];
}

function u32Bytes(values: Uint32Array): Buffer {
  const out = Buffer.allocUnsafe(values.length * 4);
  for (let i = 0; i < values.length; i++) out.writeUInt32LE(values[i]!, i * 4);
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
  terms: string[];
  dfs: number[];
  /** Inline list bytes, or null when the list is in the postings area. */
  inline: (Buffer | null)[];
  /** For lists in the postings area: offset (from the area's start), length and CRC. */
  at: number[];
  len: number[];
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
  private readonly fuzzyBytes: number;
  private readonly fuzzyCrc: number;
  private readonly blocks = new Map<number, Block>();
  private fuzzy: { lens: Uint8Array; masks: Uint32Array } | undefined;

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
    const [dictBytes, postBytes, fuzzyBytes, fuzzyCrc] = s.u32(4);
    this.keys = s.json<string[]>();
    if (!Array.isArray(this.keys) || this.keys.length !== blocks) throw new DamagedFile('bad block table');
    this.dictStart = body;
    this.postStart = body + dictBytes!;
    this.fuzzyStart = this.postStart + postBytes!;
    this.fuzzyBytes = fuzzyBytes!;
    this.fuzzyCrc = fuzzyCrc!;
  }

  private block(b: number): Block {
    const cached = this.blocks.get(b);
    if (cached) return cached;
    const from = this.blockDict[b]!;
    const to = this.blockDict[b + 1]!;
    const bytes = this.blob.read(this.dictStart + from, to - from);
    if (bytes.length !== to - from || crc32(bytes) !== this.blockCrc[b])
      throw new DamagedFile(`dictionary block ${b} fails its CRC check`);
    const block: Block = { terms: [], dfs: [], inline: [], at: [], len: [], crc: [] };
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
        block.inline.push(Buffer.from(bytes.subarray(cursor.pos, cursor.pos + len)));
        block.at.push(0);
        block.crc.push(0);
        cursor.pos += len;
      } else {
        block.inline.push(null);
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
    const inline = block.inline[i];
    if (inline) return inline;
    const len = block.len[i]!;
    const bytes = this.blob.read(this.postStart + block.at[i]!, len);
    if (bytes.length !== len || crc32(bytes) !== block.crc[i])
      throw new DamagedFile(`the postings of "${block.terms[i]}" fail their CRC check`);
    return bytes;
  }

  /** The term's df and postings, or undefined when the segment does not have it. */
  find(term: string): TermHit | undefined {
    const keys = this.keys;
    let lo = 0;
    let hi = keys.length - 1;
    // The last block whose first term is <= term.
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (keys[mid]! <= term) lo = mid;
      else hi = mid - 1;
    }
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
    const { lens, masks } = this.fuzzyColumns();
    const mask = letterMask(term);
    const out: FuzzyMatch[] = [];
    for (let i = 0; i < lens.length; i++) {
      const len = lens[i]!;
      if (len < term.length - maxDistance || len > term.length + maxDistance) continue;
      if (popcount(mask ^ masks[i]!) > 2 * maxDistance) continue;
      const block = this.block(Math.floor(i / BLOCK));
      const candidate = block.terms[i % BLOCK]!;
      if (candidate === term) continue;
      const distance = damerauLevenshtein(term, candidate, maxDistance);
      if (distance <= maxDistance) out.push({ term: candidate, distance });
    }
    return out;
  }

  private fuzzyColumns(): { lens: Uint8Array; masks: Uint32Array } {
    if (!this.fuzzy) {
      const bytes = this.blob.read(this.fuzzyStart, this.fuzzyBytes);
      if (bytes.length !== this.fuzzyBytes || crc32(bytes) !== this.fuzzyCrc)
        throw new DamagedFile('the typo lookup columns fail their CRC check');
      const n = this.termCount;
      const lens = Uint8Array.from(bytes.subarray(0, n));
      const masks = new Uint32Array(n);
      const at = n + ((4 - (n % 4)) % 4);
      for (let i = 0; i < n; i++) masks[i] = bytes.readUInt32LE(at + i * 4);
      this.fuzzy = { lens, masks };
    }
    return this.fuzzy;
  }

  /** Checks every byte of the file against its CRCs (repair); throws {@link DamagedFile}. */
  verify(): void {
    for (let b = 0; b < this.keys.length; b++) {
      const block = this.block(b);
      for (let i = 0; i < block.terms.length; i++) this.listBytes(block, i);
    }
    this.fuzzyColumns();
    const end = this.fuzzyStart + this.fuzzyBytes;
    if (this.blob.size() !== end) throw new DamagedFile(`the file should be ${end} bytes long`);
  }
}
