/**
 * Chunk seams: the text around each place where grep's reading of a document passes from one chunk to
 * the next. grep reads a document as one text (memory/grep/grep-scan.ts `assemble`), so a match may
 * straddle a chunk edge; the trigram index on chunk text cannot find such a match, since no chunk holds
 * it whole. Each chunk that starts a new piece of that text keeps the {@link SEAM_CHARS} characters
 * before and after its edge in `chunks.seam`, with its own trigram index. Then every occurrence of a
 * literal `L` has its first `min(|L|, SEAM_CHARS)` characters in one chunk's text or one seam:
 *  - inside one chunk, that chunk holds all of `L`;
 *  - across edges, let `A` be the part of `L` before the first edge: if `|A| > SEAM_CHARS`, the chunk
 *    before the edge holds `A`, which starts with those characters; otherwise the seam of that edge
 *    spans from `SEAM_CHARS` characters before the edge, so from before `L` starts, to `SEAM_CHARS`
 *    characters after it, which reaches at least `SEAM_CHARS` characters into `L` (or its end).
 * `seam` is '' where a chunk starts no edge, and null in rows written before schema version 4, which
 * grep reads whatever the pattern (`rlm repair` computes them).
 */
import { assemble, type GrepChunk } from '../grep/grep-scan.ts';

/** Characters kept on each side of a chunk edge. */
export const SEAM_CHARS = 16;

/** What grep needs of a chunk row to place it in its document's text. */
export interface SeamChunk {
  document: string;
  ordinal: number;
  start: number;
  end: number;
  text: string;
}

/**
 * A chunk as grep reads it: its offsets only where a document's chunks are not its text back to back
 * (the `size` chunker overlaps them; `turn` over JSONL renders lines), as the file stores read them.
 */
export function grepChunkOf(c: SeamChunk, chunker: string): GrepChunk {
  const chunk: GrepChunk = { id: `${c.document}:${c.ordinal}`, text: c.text, document: c.document };
  if (chunker === 'size' || chunker === 'turn') {
    chunk.start = c.start;
    chunk.end = c.end;
  }
  return chunk;
}

/**
 * The seam of each of one document's chunks (given in ordinal order): the text around the edge where the
 * chunk's piece starts in the document's assembled text, or '' when it starts none (the first chunk, a
 * chunk an overlap covers whole).
 */
export function documentSeams(chunks: readonly SeamChunk[], chunker: string): string[] {
  const out = chunks.map(() => '');
  if (chunks.length < 2) return out;
  const grepChunks = chunks.map((c) => grepChunkOf(c, chunker));
  const { text, pieces } = assemble(grepChunks);
  const index = new Map(grepChunks.map((c, i) => [c, i]));
  for (const [n, piece] of pieces.entries()) {
    if (n === 0) continue;
    out[index.get(piece.chunk)!] = text.slice(Math.max(0, piece.at - SEAM_CHARS), piece.at + SEAM_CHARS);
  }
  return out;
}

/** The seams of `records` (documents contiguous, each in ordinal order), in the same order. */
export function seamsOf(records: readonly SeamChunk[], chunkerOf: (document: string) => string): string[] {
  const out: string[] = [];
  for (let i = 0; i < records.length; ) {
    let j = i + 1;
    while (j < records.length && records[j]!.document === records[i]!.document) j++;
    out.push(...documentSeams(records.slice(i, j), chunkerOf(records[i]!.document)));
    i = j;
  }
  return out;
}
