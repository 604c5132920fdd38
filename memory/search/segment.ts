/**
 * BM25 index segments: {@link buildTerms} analyses a batch of chunks for every index format (a folder
 * store's binary `.bm25` files, bm25-file.ts; the JSON segments below), and {@link SegmentReader} answers
 * term lookups on a JSON segment without building per-term objects.
 *
 * The JSON segments are those of PostgreSQL stores and of folder stores written before schema 3.
 * The vocabulary is one sorted, newline-joined string and all postings lists are one base64 string.
 * JSON.parse of a few big strings is about five times faster than of an object with one key per term
 * (measured: 100 ms against 600 ms for the 830k segment terms of 100k chunks), and a lookup is a
 * binary search comparing characters in place.
 */
import { RlmError } from '../../core/errors.ts';
import { readVarint } from '../byte-writer.ts';
import { grown } from '../grown.ts';
import { ANALYZER_VERSION, type Analyzer, defaultAnalyzer, type Term } from './analyzer.ts';
import { decodePostings, PostingsBuffer, PostingsWriter, postingsDf } from './postings.ts';

/**
 * One index segment. `ids[i]` and `lengths[i]` (analysed term count) describe chunk i of the segment.
 * `terms.vocabulary` lists the segment's terms sorted by UTF-16 code units, joined with '\n';
 * `terms.postings` is base64 of: the byte length of each term's postings list as a varint, in
 * vocabulary order, then the lists themselves in the same order (format in postings.ts).
 */
export interface Bm25Segment {
  version: 1;
  /** {@link ANALYZER_VERSION} of the rules that built it; absent in segments from before version 2. */
  analyzer?: number;
  ids: string[];
  lengths: number[];
  terms: { vocabulary: string; postings: string };
}

let buildCounter = 0;

/**
 * The analysed terms of a batch of chunks: each chunk's analysed length, the distinct terms in vocabulary
 * order (UTF-16 code units) and each term's postings list (postings.ts), back to back. Both index
 * formats (the JSON segment below, the binary file of bm25-file.ts) are written from it.
 */
export interface SegmentTerms {
  lengths: number[];
  terms: string[];
  lists: Buffer;
  /** End of term i's list in `lists` (its start is the previous end). */
  ends: Uint32Array;
}

/**
 * Builds the index segment of `chunks` (ids should be unique within the segment). Each chunk's
 * language is detected from its own stop words. `analyzer` must follow the rules searches will use.
 */
export function buildSegment(
  chunks: readonly { id: string; text: string }[],
  analyzer: Analyzer = defaultAnalyzer(),
): Bm25Segment {
  return jsonSegment(
    chunks.map((c) => c.id),
    buildTerms(
      chunks.map((c) => c.text),
      analyzer,
    ),
  );
}

/** The JSON form of an index segment (PostgreSQL stores, schema 1 and 2 folder stores, and tests). */
function jsonSegment(ids: string[], built: SegmentTerms): Bm25Segment {
  const header = new PostingsWriter();
  for (let i = 0; i < built.terms.length; i++)
    header.varint(built.ends[i]! - (i === 0 ? 0 : built.ends[i - 1]!));
  header.append(built.lists, built.lists.length);
  return {
    version: 1,
    analyzer: ANALYZER_VERSION,
    ids,
    lengths: built.lengths,
    terms: { vocabulary: built.terms.join('\n'), postings: header.base64() },
  };
}

/**
 * Analyses `texts` into {@link SegmentTerms}. Postings go into flat typed arrays as (term slot, chunk,
 * tf) in reading order, then a counting sort by slot groups them per term with chunks still increasing:
 * no per-term arrays, little garbage.
 */
export function buildTerms(texts: readonly string[], analyzer: Analyzer = defaultAnalyzer()): SegmentTerms {
  const build = ++buildCounter;
  const lengths: number[] = new Array(texts.length);
  const seen: Term[] = [];
  let lastDoc = new Int32Array(1024);
  let lastPos = new Int32Array(1024);
  // Sized for the input (a term takes at least two characters), so a tiny segment (a few journaled
  // memories) does not allocate and zero 768 KB; the arrays still grow when needed.
  let chars = 0;
  for (const t of texts) chars += t.length;
  const initial = Math.max(64, Math.min(1 << 16, Math.ceil(chars / 2)));
  let slots = new Int32Array(initial);
  let docs = new Int32Array(initial);
  let tfs = new Int32Array(initial);
  let count = 0;
  const buffer = analyzer.termBuffer;
  for (let doc = 0; doc < texts.length; doc++) {
    const n = analyzer.analyzeTerms(texts[doc]!);
    lengths[doc] = n;
    if (count + n > slots.length) {
      slots = grown(slots, count + n);
      docs = grown(docs, count + n);
      tfs = grown(tfs, count + n);
    }
    for (let i = 0; i < n; i++) {
      const term = buffer[i]!;
      if (term.mark !== build) {
        term.mark = build;
        term.slot = seen.length;
        seen.push(term);
        if (seen.length > lastDoc.length) {
          lastDoc = grown(lastDoc, seen.length);
          lastPos = grown(lastPos, seen.length);
        }
        lastDoc[term.slot] = -1;
      }
      const slot = term.slot;
      if (lastDoc[slot] === doc) {
        tfs[lastPos[slot]!]!++;
      } else {
        lastDoc[slot] = doc;
        lastPos[slot] = count;
        slots[count] = slot;
        docs[count] = doc;
        tfs[count] = 1;
        count++;
      }
    }
  }
  // Counting sort of the postings by term slot; stable, so chunks stay in increasing order.
  const start = new Int32Array(seen.length + 1);
  for (let p = 0; p < count; p++) start[slots[p]! + 1]!++;
  for (let t = 0; t < seen.length; t++) start[t + 1]! += start[t]!;
  const fill = start.slice(0, seen.length);
  const order = new Int32Array(count);
  for (let p = 0; p < count; p++) order[fill[slots[p]!]!++] = p;
  return sortTerms(lengths, seen, (slot, out) => {
    const from = start[slot]!;
    const df = start[slot + 1]! - from;
    out.reserve(df);
    for (let i = 0; i < df; i++) {
      const p = order[from + i]!;
      out.docs[i] = docs[p]!;
      out.tfs[i] = tfs[p]!;
    }
    return df;
  });
}

/** Scratch for {@link mergeLists}. */
const merging = { a: new PostingsBuffer(), b: new PostingsBuffer() };

/**
 * The postings of several slots of one text merged into `out` (chunks increasing, term frequencies of a
 * chunk summed); returns their count. Each list is in increasing chunk order already.
 */
function mergeLists(
  slots: readonly number[],
  postingsOf: (slot: number, out: PostingsBuffer) => number,
  out: PostingsBuffer,
): number {
  let n = 0;
  for (const slot of slots) {
    // out holds the merge so far; a takes a copy of it, b the next list, and they merge back into out.
    const { a, b } = merging;
    a.reserve(n);
    a.docs.set(out.docs.subarray(0, n));
    a.tfs.set(out.tfs.subarray(0, n));
    const m = postingsOf(slot, b);
    out.reserve(n + m);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < n || j < m) {
      if (j >= m || (i < n && a.docs[i]! < b.docs[j]!)) {
        out.docs[k] = a.docs[i]!;
        out.tfs[k++] = a.tfs[i++]!;
      } else if (i >= n || b.docs[j]! < a.docs[i]!) {
        out.docs[k] = b.docs[j]!;
        out.tfs[k++] = b.tfs[j++]!;
      } else {
        out.docs[k] = a.docs[i]!;
        out.tfs[k++] = a.tfs[i++]! + b.tfs[j++]!;
      }
    }
    n = k;
  }
  return n;
}

function sortTerms(
  lengths: number[],
  seen: readonly Term[],
  postingsOf: (slot: number, out: PostingsBuffer) => number,
): SegmentTerms {
  // The slots in text order (UTF-16 units); equal texts stay in slot order (the sort is stable).
  const bySlot = Array.from(seen.keys());
  bySlot.sort((a, b) => {
    const x = seen[a]!.text;
    const y = seen[b]!.text;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const terms: string[] = [];
  const ends: number[] = [];
  const lists = new PostingsWriter();
  const out = new PostingsBuffer();
  for (let i = 0; i < bySlot.length; ) {
    // Two Term objects share a text only when the analyzer's memo was cleared mid-build: merge them.
    const text = seen[bySlot[i]!]!.text;
    let j = i + 1;
    while (j < bySlot.length && seen[bySlot[j]!]!.text === text) j++;
    let df: number;
    if (j === i + 1) {
      df = postingsOf(bySlot[i]!, out);
    } else {
      df = mergeLists(bySlot.slice(i, j), postingsOf, out);
    }
    lists.list(out.docs, out.tfs, df);
    ends.push(lists.length);
    terms.push(text);
    i = j;
  }
  return { lengths, terms, lists: lists.bytes(), ends: Uint32Array.from(ends) };
}

/** Throws STORE_CORRUPT unless `seg` has the shape of a {@link Bm25Segment}. Cheap: nothing decoded. */
export function checkSegment(name: string, seg: unknown): asserts seg is Bm25Segment {
  const s = seg as Partial<Bm25Segment> | null;
  const fail = (why: string): never => {
    throw new RlmError('STORE_CORRUPT', `BM25 segment ${name} is damaged: ${why}`, { segment: name });
  };
  if (typeof s !== 'object' || s === null) return fail('not an object');
  if (s.version !== 1) fail(`unknown version ${String(s.version)}`);
  if (!Array.isArray(s.ids) || !Array.isArray(s.lengths)) fail('ids or lengths missing');
  if (s.ids!.length !== s.lengths!.length) fail('ids and lengths differ in length');
  const t = s.terms;
  if (
    typeof t !== 'object' ||
    t === null ||
    typeof t.vocabulary !== 'string' ||
    typeof t.postings !== 'string'
  ) {
    fail('terms missing');
  }
}

/**
 * Term lookups on one segment. Decoding (base64, line and list offsets) happens on first use, so
 * loading an index stays the cost of JSON.parse.
 */
export class SegmentReader {
  readonly seg: Bm25Segment;
  private starts: Uint32Array | undefined;
  private bytes: Buffer | undefined;
  private offsets: Float64Array | undefined;

  constructor(seg: Bm25Segment) {
    this.seg = seg;
  }

  /** Number of distinct terms. */
  get termCount(): number {
    return this.lineStarts().length - 1;
  }

  /** Start of each vocabulary line, plus one past the end (so line i is [starts[i], starts[i+1] - 1)). */
  private lineStarts(): Uint32Array {
    if (!this.starts) {
      const vocab = this.seg.terms.vocabulary;
      const starts: number[] = vocab.length === 0 ? [] : [0];
      for (let at = vocab.indexOf('\n'); at !== -1; at = vocab.indexOf('\n', at + 1)) starts.push(at + 1);
      starts.push(vocab.length + 1);
      this.starts = Uint32Array.from(starts);
    }
    return this.starts;
  }

  private open(): { bytes: Buffer; offsets: Float64Array } {
    if (!this.bytes || !this.offsets) {
      const bytes = Buffer.from(this.seg.terms.postings, 'base64');
      const count = this.termCount;
      const offsets = new Float64Array(count + 1);
      const cursor = { pos: 0 };
      const lengths = new Float64Array(count);
      for (let i = 0; i < count; i++) lengths[i] = readVarint(bytes, cursor, bytes.length);
      let at = cursor.pos;
      for (let i = 0; i < count; i++) {
        offsets[i] = Math.min(at, bytes.length);
        at += lengths[i]!;
      }
      offsets[count] = Math.min(at, bytes.length);
      this.bytes = bytes;
      this.offsets = offsets;
    }
    return { bytes: this.bytes, offsets: this.offsets };
  }

  /** The i-th term of the vocabulary. */
  termAt(i: number): string {
    const starts = this.lineStarts();
    return this.seg.terms.vocabulary.slice(starts[i]!, starts[i + 1]! - 1);
  }

  /** Index of `term` in the vocabulary, or -1. */
  find(term: string): number {
    const starts = this.lineStarts();
    const vocab = this.seg.terms.vocabulary;
    let lo = 0;
    let hi = starts.length - 2;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareLine(vocab, starts[mid]!, starts[mid + 1]! - 1, term);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** df of the i-th term. */
  df(i: number): number {
    const { bytes, offsets } = this.open();
    return postingsDf(bytes, offsets[i]!, offsets[i + 1]!);
  }

  /** Decodes the i-th term's postings into `out`; returns their count. */
  postings(i: number, out: PostingsBuffer): number {
    const { bytes, offsets } = this.open();
    return decodePostings(bytes, offsets[i]!, offsets[i + 1]!, out);
  }
}

/** Compares `vocab[start, end)` with `term` by UTF-16 code units, like `<` on strings. */
function compareLine(vocab: string, start: number, end: number, term: string): number {
  const len = end - start;
  const m = Math.min(len, term.length);
  for (let i = 0; i < m; i++) {
    const d = vocab.charCodeAt(start + i) - term.charCodeAt(i);
    if (d !== 0) return d;
  }
  return len - term.length;
}
