/**
 * A segment's chunk file, `seg-N.chunks` (schema 3, memory/SCHEMA.md): the source of truth for its chunks.
 * A binary header region holds every record field in columns (document runs, offsets, token counts,
 * types, tags, sections, times) with the UTF-8 end and the CRC-32 of each chunk's text; the texts follow,
 * back to back. A chunk's text is one positioned read and a CRC check; grep reads the file once and
 * decodes chunk by chunk. The header region is small (about 30 bytes a chunk), so opening a segment to
 * read one chunk reads kilobytes.
 *
 * A text holding a lone surrogate (UTF-16 that UTF-8 cannot encode) is stored as UTF-16LE, flagged in its
 * chunk's encoding byte, so every text reads back exactly as written.
 *
 * Pure functions over bytes, no I/O: the grep worker uses them too.
 */
import { crc32, DamagedFile, framedFrom, Layout, Sections } from '../binary.ts';
import { CHUNK_TYPES, type ChunkRecord, type ChunkType } from '../types.ts';

const CHUNK_FILE_MAGIC = 'rlmchk3\n';
const VERSION = 3;
/** Column value for "no section" / "no time". */
const NONE = 0xffffffff;
/** Encoding byte of a text stored as UTF-16LE (0: UTF-8). */
const UTF16 = 1;

/** A document's run of chunks in a segment. */
export interface DocRun {
  id: string;
  first: number;
  count: number;
}

interface HeaderJson {
  segment: string;
  createdAt: string;
  docs: string[];
  tags: string[];
  sections: string[];
  times: string[];
}

/** Index of each distinct string in `table`, added on first sight. */
function interner(table: string[]): (s: string) => number {
  const index = new Map<string, number>();
  return (s) => {
    let k = index.get(s);
    if (k === undefined) {
      k = table.length;
      index.set(s, k);
      table.push(s);
    }
    return k;
  };
}

/**
 * The bytes of a chunk file for `records` (in segment order, each document's chunks together and in
 * order): the framed header, then the texts. Two buffers, so the texts are not copied again.
 */
export function encodeChunkFile(
  segment: string,
  createdAt: string,
  records: readonly ChunkRecord[],
): Buffer[] {
  const n = records.length;
  const json: HeaderJson = { segment, createdAt, docs: [], tags: [], sections: [], times: [] };
  const docChunks: number[] = [];
  const encoding = new Uint8Array(n);
  const lengths = new Uint32Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    if (json.docs[json.docs.length - 1] === r.document) docChunks[docChunks.length - 1]!++;
    else {
      json.docs.push(r.document);
      docChunks.push(1);
    }
    if (r.text.isWellFormed()) lengths[i] = Buffer.byteLength(r.text, 'utf8');
    else {
      encoding[i] = UTF16;
      lengths[i] = r.text.length * 2;
    }
    total += lengths[i]!;
  }
  const texts = Buffer.allocUnsafe(total);
  const textEnd = new Uint32Array(n);
  const crc = new Uint32Array(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const written = texts.write(records[i]!.text, at, encoding[i] === UTF16 ? 'utf16le' : 'utf8');
    crc[i] = crc32(texts.subarray(at, at + written));
    at += written;
    textEnd[i] = at;
  }
  const tag = interner(json.tags);
  const section = interner(json.sections);
  const time = interner(json.times);
  const tagStart = new Uint32Array(n + 1);
  const tagRefs: number[] = [];
  const sections = new Uint32Array(n);
  const times = new Uint32Array(n);
  const types = new Uint8Array(n);
  records.forEach((r, i) => {
    for (const t of r.tags) tagRefs.push(tag(t));
    tagStart[i + 1] = tagRefs.length;
    sections[i] = r.section ? section(r.section) : NONE;
    times[i] = r.time ? time(r.time) : NONE;
    types[i] = Math.max(0, CHUNK_TYPES.indexOf(r.type));
  });
  const layout = new Layout()
    .u32([VERSION, n, json.docs.length])
    .json(json)
    .u32(docChunks)
    .u32(textEnd)
    .u32(crc)
    .u32(records.map((r) => r.start))
    .u32(records.map((r) => r.end))
    .u32(records.map((r) => r.tokens))
    .u32(tagStart)
    .u32(tagRefs)
    .u32(sections)
    .u32(times)
    .u8(types)
    .u8(encoding);
  return [layout.frame(CHUNK_FILE_MAGIC), texts];
}

/** The header region of a chunk file, decoded into columns (typed arrays over its bytes). */
export class ChunkFileHeader {
  readonly segment: string;
  readonly createdAt: string;
  readonly count: number;
  readonly docs: DocRun[];
  /** Offset in the file where the texts start. */
  readonly body: number;
  private readonly textEnd: Uint32Array;
  private readonly crc: Uint32Array;
  private readonly starts: Uint32Array;
  private readonly ends: Uint32Array;
  private readonly tokenCounts: Uint32Array;
  private readonly tagStart: Uint32Array;
  private readonly tagRefs: Uint32Array;
  private readonly tagTable: string[];
  private readonly sections: Uint32Array;
  private readonly sectionTable: string[];
  private readonly times: Uint32Array;
  private readonly timeTable: string[];
  private readonly types: Uint8Array;
  private readonly encodings: Uint8Array;

  /** Decodes a header region (already checked against its CRC); throws {@link DamagedFile} when it does not add up. */
  constructor(header: Buffer, body: number) {
    const s = new Sections(header);
    const [version, n, docCount] = [s.one(), s.one(), s.one()];
    if (version !== VERSION) throw new DamagedFile(`unknown chunk file version ${version}`);
    const json = s.json<HeaderJson>();
    if (!Array.isArray(json.docs) || json.docs.length !== docCount)
      throw new DamagedFile('bad document table');
    this.segment = json.segment;
    this.createdAt = json.createdAt;
    this.count = n;
    this.body = body;
    const docChunks = s.u32(docCount);
    this.docs = [];
    let first = 0;
    for (let d = 0; d < docCount; d++) {
      this.docs.push({ id: json.docs[d]!, first, count: docChunks[d]! });
      first += docChunks[d]!;
    }
    if (first !== n) throw new DamagedFile('document runs do not cover the chunks');
    this.textEnd = s.u32(n);
    this.crc = s.u32(n);
    this.starts = s.u32(n);
    this.ends = s.u32(n);
    this.tokenCounts = s.u32(n);
    this.tagStart = s.u32(n + 1);
    this.tagRefs = s.u32(this.tagStart[n] ?? 0);
    this.sections = s.u32(n);
    this.times = s.u32(n);
    this.types = s.u8(n);
    this.encodings = s.u8(n);
    this.tagTable = json.tags;
    this.sectionTable = json.sections;
    this.timeTable = json.times;
  }

  /** Total bytes of text; the file is `body + textBytes` long. */
  get textBytes(): number {
    return this.count === 0 ? 0 : this.textEnd[this.count - 1]!;
  }

  /** UTF-8 bytes of chunk `i`'s text, or -1 when it is stored as UTF-16 (decode it to know). */
  utf8Bytes(i: number): number {
    if (this.encodings[i] === UTF16) return -1;
    const [from, to] = this.range(i);
    return to - from;
  }

  /** Whether chunk `i`'s bytes (`bytes[at, …)` being its range) match its CRC-32. */
  intact(i: number, bytes: Buffer, at = 0): boolean {
    const [from, to] = this.range(i);
    const part = bytes.subarray(at, at + (to - from));
    return part.length === to - from && crc32(part) === this.crc[i];
  }

  /** Byte range of chunk `i`'s text in the file. */
  range(i: number): [from: number, to: number] {
    return [this.body + (i === 0 ? 0 : this.textEnd[i - 1]!), this.body + this.textEnd[i]!];
  }

  /**
   * Chunk `i`'s text from its bytes (`bytes[at, at + length)` being exactly the chunk's range), checked
   * against its CRC-32: {@link DamagedFile} when it fails.
   */
  text(i: number, bytes: Buffer, at = 0): string {
    const [from, to] = this.range(i);
    const part = bytes.subarray(at, at + (to - from));
    if (part.length !== to - from) throw new DamagedFile(`chunk ${i} ends early`);
    if (crc32(part) !== this.crc[i]) throw new DamagedFile(`chunk ${i} fails its CRC check`);
    return part.toString(this.encodings[i] === UTF16 ? 'utf16le' : 'utf8');
  }

  start(i: number): number {
    return this.starts[i]!;
  }
  end(i: number): number {
    return this.ends[i]!;
  }
  tokens(i: number): number {
    return this.tokenCounts[i]!;
  }
  type(i: number): ChunkType {
    return CHUNK_TYPES[this.types[i]!] ?? 'text';
  }
  tags(i: number): string[] {
    const out: string[] = [];
    for (let k = this.tagStart[i]!; k < this.tagStart[i + 1]!; k++)
      out.push(this.tagTable[this.tagRefs[k]!]!);
    return out;
  }
  section(i: number): string | null {
    const k = this.sections[i]!;
    return k === NONE ? null : (this.sectionTable[k] ?? null);
  }
  time(i: number): string | null {
    const k = this.times[i]!;
    return k === NONE ? null : (this.timeTable[k] ?? null);
  }
}

/** The header of a chunk file from its first bytes, which must hold the whole header region. */
export function chunkFileHeader(bytes: Buffer): ChunkFileHeader {
  const { header, body } = framedFrom(bytes, CHUNK_FILE_MAGIC);
  return new ChunkFileHeader(header, body);
}
