/**
 * The seams of a file stored in parts (memory/SCHEMA.md: documents `ID`, `ID.p2`, …): grep reads the
 * parts as one text without ever holding more than one part. Each part is scanned with the tail of
 * the text before it (a {@link GrepCarry}) in front, and matches that start in its own tail are left to
 * the next part's scan, which sees them with what follows the seam. A match that runs across a seam is
 * so found when it starts at most {@link SEAM_CHARS} characters before the seam; lines, `before` and
 * `after` are whole across it, and positions are the file's, as readDocument(ID) numbers them.
 */

import { ownString } from '../own-string.ts';
import type { GrepDocumentCount } from '../types.ts';
import { type DocText, LEAD_CHARS, type Piece } from './assemble.ts';

/**
 * How far before a seam a match may start and still be found across it, in characters: the tail the
 * next part's scan reads again. Longer than any `context` (10,000) so that context is whole across a
 * seam; small beside a part (about 2 MiB), so it costs the scan little.
 */
export const SEAM_CHARS = 64 * 1024;

/** What the scan of a part leaves to the scan of the next part of its file. */
export interface GrepCarry {
  /** The file's id (its first part's): matches and counts name it. */
  file: string;
  /** The end of the text scanned so far: the part's tail, from a line start where one is near. */
  text: string;
  /** Where `text`'s chunks are, positions in `text` and document offsets in the file's. */
  pieces: Piece[];
  /** File offset where the next part starts, or -1 when unknown (rendered chunks). */
  base: number;
  /** Where the scan resumes in `text`; past its end when the last line reported runs on into the next part. */
  from: number;
  /** End of the last line counted (count mode), in `text` (-1: before it); its length when that line runs on. */
  lineEnd: number;
  /** The file's counts so far, in count mode. */
  tally: GrepDocumentCount | null;
}

/**
 * Where the tail to leave to the next part begins in `text`: {@link SEAM_CHARS} before its end, back to
 * the start of that line unless the line is longer than another SEAM_CHARS (then the tail, and a line
 * it cuts, starts inside it, so what is carried stays bounded).
 */
export function holdFrom(text: string): number {
  const at = text.length - SEAM_CHARS;
  if (at <= 0) return 0;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  return at - lineStart <= SEAM_CHARS ? lineStart : at;
}

/**
 * A part's text with the carry of the part before it in front (`own`: its chunks assembled after
 * `carry.text`), in the file's offsets, and where its scan starts.
 */
export function afterCarry(carry: GrepCarry, own: DocText): { doc: DocText; from: number; lineEnd: number } {
  const base = carry.base;
  const pieces = carry.pieces.concat(
    own.pieces.map((p) => ({ ...p, doc: p.doc < 0 || base < 0 ? -1 : p.doc + base })),
  );
  const text = own.text;
  const doc: DocText = {
    text,
    pieces,
    document: carry.file,
    end: own.end < 0 || base < 0 ? -1 : base + own.end,
  };
  // A line that ran on past the seam ends in this part: resume (or count) from its end here.
  const runOn = carry.text.length;
  let from = carry.from;
  if (from > runOn) {
    const nl = text.indexOf('\n', runOn);
    from = nl === -1 ? text.length + 1 : nl + 1;
  }
  let lineEnd = carry.lineEnd;
  if (lineEnd >= runOn) {
    lineEnd = text.indexOf('\n', runOn);
    if (lineEnd === -1) lineEnd = text.length;
  }
  return { doc, from, lineEnd };
}

/**
 * What the scan of `doc` leaves to the next part: its text from `hold` (see {@link holdFrom}), with
 * `context` characters and a cut line's lead before it so that a match there is shaped as it would be
 * in the whole file; `from` and `lineEnd` are positions in `doc.text`.
 */
export function carryFrom(
  doc: DocText,
  hold: number,
  scan: { from: number; lineEnd: number; tally: GrepDocumentCount | null; context: number },
): GrepCarry {
  const keep = Math.max(0, hold - scan.context - LEAD_CHARS);
  const pieces: Piece[] = [];
  for (const p of doc.pieces) {
    if (p.at + p.len <= keep) continue;
    const cut = Math.max(0, keep - p.at);
    pieces.push({
      at: p.at + cut - keep,
      len: p.len - cut,
      id: p.id,
      from: p.from + cut,
      doc: p.doc < 0 ? -1 : p.doc + cut,
    });
  }
  return {
    file: doc.document ?? '',
    // A copy: a slice would keep the whole part alive until the next part is scanned.
    text: ownString(doc.text.slice(keep)),
    pieces,
    base: doc.end,
    from: Math.max(scan.from, hold) - keep,
    lineEnd: scan.lineEnd < keep ? -1 : scan.lineEnd - keep,
    tally: scan.tally,
  };
}
