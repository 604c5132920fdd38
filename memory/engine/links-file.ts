/**
 * A segment's related_to links and linker signatures as a binary file, `seg-N.links` (schema 3,
 * memory/SCHEMA.md). A link is stored once, in the segment of its `from` chunk, twice indexed: by the
 * `from` chunk (its out edges) and, grouped by the segment of the `to` chunk, by that chunk's position
 * (in edges). The header region lists those groups, so the links of one chunk are found by reading the
 * out edges of its own segment and one small group of each segment that links into it: a `peek` reads
 * kilobytes whatever the size of the store.
 *
 * Every area of the body has its CRC-32 (each in-edge group its own), checked when the area is read.
 */

import { lastAtMost } from '../../core/last-at-most.ts';
import { crc32, DamagedFile, Layout, readFramed, Sections, u32Bytes } from '../binary.ts';
import type { Blob } from '../blob.ts';
import type { DocRun } from '../grep/chunk-file.ts';

const LINKS_FILE_MAGIC = 'rlmlnk3\n';
const VERSION = 3;

/** A related_to link leaving a chunk of the segment. */
export interface OutEdge {
  /** Position of the `from` chunk in this segment. */
  fromIdx: number;
  /** The `to` chunk: its id, segment and position there. */
  to: string;
  toSegment: string;
  toIdx: number;
  strength: number;
}

/** A related_to link arriving at a chunk, as the segment holding it stores it. */
export interface InEdge {
  from: string;
  strength: number;
}

/** What a links file holds. */
export interface LinksInput {
  segment: string;
  docs: readonly DocRun[];
  edges: readonly OutEdge[];
  /** Per chunk of the segment, in order: its signature terms. */
  signatures: readonly (readonly string[])[];
}

/** The number in a segment name (`seg-000042` → 42): links name segments by number. */
function segmentNumber(name: string): number {
  return Number(name.slice(4));
}

function segmentOfNumber(n: number): string {
  return `seg-${String(n).padStart(6, '0')}`;
}

/** Strengths are kept in thousandths, as the linker rounds them. */
const permille = (s: number) => Math.max(0, Math.round(s * 1000));

function jsonBytes(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  return Buffer.concat([u32Bytes([json.length]), json]);
}

/** The bytes of a links file: the framed header, then the body areas. */
export function encodeLinksFile(input: LinksInput): Buffer[] {
  const n = input.signatures.length;
  const count = input.edges.length;
  const toSeg = Uint32Array.from(input.edges, (e) => segmentNumber(e.toSegment));
  // Out area: per chunk where its edges start, then per edge (segment, target document, ordinal,
  // strength) in `from` order (as given within a chunk), then the table of target documents.
  const outStart = new Uint32Array(n + 1);
  for (const e of input.edges) outStart[e.fromIdx + 1]!++;
  for (let i = 0; i < n; i++) outStart[i + 1]! += outStart[i]!;
  const fill = outStart.slice(0, n);
  const byFrom = new Uint32Array(count);
  input.edges.forEach((e, k) => {
    byFrom[fill[e.fromIdx]!++] = k;
  });
  const targets: string[] = [];
  const targetIndex = new Map<string, number>();
  const out = new Uint32Array(count * 4);
  for (let j = 0; j < count; j++) {
    const k = byFrom[j]!;
    const e = input.edges[k]!;
    const colon = e.to.lastIndexOf(':');
    const doc = e.to.slice(0, colon);
    let ref = targetIndex.get(doc);
    if (ref === undefined) {
      ref = targets.length;
      targetIndex.set(doc, ref);
      targets.push(doc);
    }
    out[j * 4] = toSeg[k]!;
    out[j * 4 + 1] = ref;
    out[j * 4 + 2] = Number(e.to.slice(colon + 1));
    out[j * 4 + 3] = permille(e.strength);
  }
  const outArea = Buffer.concat([u32Bytes(outStart), u32Bytes(out), jsonBytes(targets)]);
  // In area: edges grouped by target segment (by number), each group by target position.
  const byTarget = Array.from(byFrom);
  byTarget.sort(
    (a, b) =>
      toSeg[a]! - toSeg[b]! ||
      input.edges[a]!.toIdx - input.edges[b]!.toIdx ||
      input.edges[a]!.fromIdx - input.edges[b]!.fromIdx,
  );
  const groupSeg: number[] = [];
  const groupStart: number[] = [];
  const groupCrc: number[] = [];
  const inEdges = new Uint32Array(count * 3);
  for (let j = 0; j < count; j++) {
    const e = input.edges[byTarget[j]!]!;
    inEdges[j * 3] = e.toIdx;
    inEdges[j * 3 + 1] = e.fromIdx;
    inEdges[j * 3 + 2] = permille(e.strength);
  }
  const inArea = u32Bytes(inEdges);
  for (let i = 0; i < count; ) {
    const seg = toSeg[byTarget[i]!]!;
    let j = i;
    while (j < count && toSeg[byTarget[j]!] === seg) j++;
    groupSeg.push(seg);
    groupStart.push(i);
    groupCrc.push(crc32(inArea.subarray(i * 12, j * 12)));
    i = j;
  }
  groupStart.push(count);
  // Signatures: per chunk where its terms start, the term references, the term table.
  const terms: string[] = [];
  const termIndex = new Map<string, number>();
  const sigStart = new Uint32Array(n + 1);
  const refs: number[] = [];
  input.signatures.forEach((sig, i) => {
    for (const t of sig) {
      let k = termIndex.get(t);
      if (k === undefined) {
        k = terms.length;
        termIndex.set(t, k);
        terms.push(t);
      }
      refs.push(k);
    }
    sigStart[i + 1] = refs.length;
  });
  const sigArea = Buffer.concat([u32Bytes(sigStart), u32Bytes(refs), jsonBytes(terms)]);
  const docsArea = jsonBytes({ ids: input.docs.map((d) => d.id), counts: input.docs.map((d) => d.count) });
  const head = new Layout()
    .u32([VERSION, n, count, groupSeg.length])
    .u32(groupSeg)
    .u32(groupStart)
    .u32(groupCrc)
    .u32([docsArea.length, crc32(docsArea), outArea.length, crc32(outArea), inArea.length, sigArea.length])
    .u32([crc32(sigArea)])
    .json(input.segment);
  return [head.frame(LINKS_FILE_MAGIC), docsArea, outArea, inArea, sigArea];
}

/** Reads a `seg-N.links` file through a {@link Blob}; throws {@link DamagedFile} on bytes that do not check out. */
export class LinksFile {
  readonly chunkCount: number;
  readonly edgeCount: number;
  private readonly blob: Blob;
  private readonly groupSeg: Uint32Array;
  private readonly groupStart: Uint32Array;
  private readonly groupCrc: Uint32Array;
  private readonly areas: { at: number; bytes: number; crc: number }[];
  private docRuns: { ids: string[]; first: Uint32Array } | undefined;
  private outArea: { start: Uint32Array; edges: Uint32Array; targets: string[] } | undefined;
  private readonly groups = new Map<number, Uint32Array>();

  constructor(blob: Blob) {
    this.blob = blob;
    const { header, body } = readFramed(blob, LINKS_FILE_MAGIC);
    const s = new Sections(header);
    const [version, chunks, edges, groups] = [s.one(), s.one(), s.one(), s.one()];
    if (version !== VERSION) throw new DamagedFile(`unknown links file version ${version}`);
    this.chunkCount = chunks;
    this.edgeCount = edges;
    this.groupSeg = s.u32(groups);
    this.groupStart = s.u32(groups + 1);
    this.groupCrc = s.u32(groups);
    const [docsBytes, docsCrc, outBytes, outCrc, inBytes, sigBytes] = s.u32(6);
    const sigCrc = s.one();
    let at = body;
    this.areas = [
      { bytes: docsBytes!, crc: docsCrc! },
      { bytes: outBytes!, crc: outCrc! },
      { bytes: inBytes!, crc: 0 },
      { bytes: sigBytes!, crc: sigCrc },
    ].map((a) => {
      const area = { ...a, at };
      at += a.bytes;
      return area;
    });
  }

  /** Area `i` (0 docs, 1 out, 3 signatures), checked against its CRC. */
  private area(i: number): Sections {
    const { at, bytes, crc } = this.areas[i]!;
    const raw = this.blob.read(at, bytes);
    if (raw.length !== bytes || crc32(raw) !== crc) throw new DamagedFile(`area ${i} fails its CRC check`);
    const aligned = Buffer.alloc(bytes);
    raw.copy(aligned);
    return new Sections(aligned);
  }

  private docs(): { ids: string[]; first: Uint32Array } {
    if (!this.docRuns) {
      const { ids, counts } = this.area(0).json<{ ids: string[]; counts: number[] }>();
      const first = new Uint32Array(ids.length);
      for (let i = 1; i < ids.length; i++) first[i] = first[i - 1]! + counts[i - 1]!;
      this.docRuns = { ids, first };
    }
    return this.docRuns;
  }

  /** The id of this segment's chunk at `idx`. */
  private idOf(idx: number): string {
    const { ids, first } = this.docs();
    const lo = lastAtMost(first, idx);
    return `${ids[lo]}:${idx - first[lo]!}`;
  }

  private out(): { start: Uint32Array; edges: Uint32Array; targets: string[] } {
    if (!this.outArea) {
      const s = this.area(1);
      const start = s.u32(this.chunkCount + 1);
      const edges = s.u32(this.edgeCount * 4);
      this.outArea = { start, edges, targets: s.json<string[]>() };
    }
    return this.outArea;
  }

  /** Links out of this segment's chunk at `idx`: to chunk, its segment, strength. */
  from(idx: number): { to: string; toSegment: string; strength: number }[] {
    if (idx >= this.chunkCount) return [];
    const { start, edges, targets } = this.out();
    const list: { to: string; toSegment: string; strength: number }[] = [];
    for (let e = start[idx]!; e < start[idx + 1]!; e++) {
      const k = e * 4;
      list.push({
        to: `${targets[edges[k + 1]!]}:${edges[k + 2]}`,
        toSegment: segmentOfNumber(edges[k]!),
        strength: edges[k + 3]! / 1000,
      });
    }
    return list;
  }

  /** Every link out of this segment, by `from` position (counting, rewriting a segment). */
  *all(): Generator<{ fromIdx: number; to: string; toSegment: string; strength: number }> {
    for (let idx = 0; idx < this.chunkCount; idx++)
      for (const e of this.from(idx)) yield { fromIdx: idx, ...e };
  }

  /** Whether this segment links into segment `target` at all (read from the header only). */
  linksInto(target: string): boolean {
    return this.groupIndex(segmentNumber(target)) >= 0;
  }

  private groupIndex(seg: number): number {
    let lo = 0;
    let hi = this.groupSeg.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.groupSeg[mid]!;
      if (v === seg) return mid;
      if (v < seg) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Links of this segment into the chunk at `idx` of segment `target`. */
  into(target: string, idx: number): InEdge[] {
    const g = this.groupIndex(segmentNumber(target));
    if (g < 0) return [];
    let edges = this.groups.get(g);
    if (!edges) {
      const from = this.groupStart[g]!;
      const count = this.groupStart[g + 1]! - from;
      const raw = this.blob.read(this.areas[2]!.at + from * 12, count * 12);
      if (raw.length !== count * 12 || crc32(raw) !== this.groupCrc[g])
        throw new DamagedFile(`the links into ${target} fail their CRC check`);
      edges = new Uint32Array(count * 3);
      for (let i = 0; i < edges.length; i++) edges[i] = raw.readUInt32LE(i * 4);
      this.groups.set(g, edges);
    }
    // The first edge with toIdx >= idx.
    let lo = 0;
    let hi = edges.length / 3;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (edges[mid * 3]! < idx) lo = mid + 1;
      else hi = mid;
    }
    const out: InEdge[] = [];
    for (let e = lo; e < edges.length / 3 && edges[e * 3] === idx; e++)
      out.push({ from: this.idOf(edges[e * 3 + 1]!), strength: edges[e * 3 + 2]! / 1000 });
    return out;
  }

  /** Per chunk, its signature terms. */
  signatures(): string[][] {
    const s = this.area(3);
    const start = s.u32(this.chunkCount + 1);
    const refs = s.u32(start[this.chunkCount] ?? 0);
    const terms = s.json<string[]>();
    return Array.from({ length: this.chunkCount }, (_, i) => {
      const sig: string[] = [];
      for (let k = start[i]!; k < start[i + 1]!; k++) sig.push(terms[refs[k]!]!);
      return sig;
    });
  }

  /** Checks every area and group against its CRC (repair); throws {@link DamagedFile}. */
  verify(): void {
    this.docs();
    this.out();
    this.signatures();
    for (let g = 0; g < this.groupSeg.length; g++) this.into(segmentOfNumber(this.groupSeg[g]!), 0);
    const last = this.areas[3]!;
    if (this.blob.size() !== last.at + last.bytes) throw new DamagedFile('the file has the wrong length');
  }
}
