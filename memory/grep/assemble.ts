/**
 * A document's chunks read back to back as the one text grep scans, and the match grep reports for a
 * position of that text. Pure functions over strings, used on either side of the worker boundary.
 */
import { ownString } from '../own-string.ts';
import type { GrepMatch } from '../types.ts';

/** One searchable piece of the corpus. */
export interface GrepChunk {
  id: string;
  text: string;
  /**
   * Document id: consecutive chunks of one document are scanned as one text, and the `document` filter
   * uses it. Chunks without one are scanned alone and never filtered out (the caller chose them).
   */
  document?: string;
  /**
   * UTF-16 offsets of the chunk in its document, when known. Chunks that overlap are then read once, a
   * chunk whose text is not the document's slice (a rendered transcript) is set on a line of its own,
   * and matches get a `documentOffset`. Without offsets, a document's chunks are taken to follow each
   * other exactly, the first at offset 0 (what every chunker but `size` and `turn` produces).
   */
  start?: number;
  end?: number;
  /**
   * On a document's first chunk, when the document is a part of a file stored in parts: the part
   * before it, whose scan this one continues (graph-rules.ts `partLinks`; grep-scan.ts `scanDocument`).
   */
  prevPart?: string;
  /** On a document's first chunk: the part after it, which continues its scan. */
  nextPart?: string;
}

/** Longest `text` reported for one match; longer lines are cut to a window around the match. */
export const MAX_LINE_CHARS = 500;
/** Characters of the window kept before the match when a line is cut. */
export const LEAD_CHARS = 200;
const ELLIPSIS = '…';

/** Where a chunk's text lands in a document's assembled text. */
export interface Piece {
  /** Position in the assembled text. */
  at: number;
  /** Its length there. */
  len: number;
  /** The chunk. */
  id: string;
  /** Offset in the chunk's text where the piece starts (past an overlap with the previous chunk). */
  from: number;
  /** Document offset of `at`, or -1 when the chunk's text is not a slice of the document. */
  doc: number;
}

/** A document's chunks read back to back. */
export interface DocText {
  text: string;
  pieces: Piece[];
  /** The document matches name: the chunks' own, or a file's first part when it is read in parts. */
  document: string | undefined;
  /** Document offset the text reaches (where a next part would start), or -1 when unknown. */
  end: number;
}

const exactOffsets = (c: GrepChunk): boolean =>
  c.start !== undefined && c.end !== undefined && c.end - c.start === c.text.length;

/**
 * Reads a document's chunks (in order) as one text; see {@link GrepChunk} for how offsets are used.
 * `lead` goes before them (what the part before left, seams.ts), in the same string: joined after, a
 * part would be copied once more when the regex flattens the two.
 */
export function assemble(chunks: readonly GrepChunk[], lead = ''): DocText {
  const first = chunks[0];
  if (chunks.length === 1 && first !== undefined && lead === '') {
    const doc = first.start === undefined ? 0 : exactOffsets(first) ? first.start : -1;
    return {
      text: first.text,
      pieces: [{ at: 0, len: first.text.length, id: first.id, from: 0, doc }],
      document: first.document,
      end: doc < 0 ? -1 : doc + first.text.length,
    };
  }
  const parts: string[] = [lead];
  const pieces: Piece[] = [];
  let length = lead.length;
  let lastChar = lead === '' ? 10 : lead.charCodeAt(lead.length - 1);
  /** Document offset the text so far reaches, or -1 when unknown. */
  let covered = 0;
  for (const c of chunks) {
    let from = 0;
    let doc: number;
    if (c.start === undefined) {
      doc = covered;
    } else if (exactOffsets(c)) {
      if (covered >= 0 && c.start < covered) {
        from = covered - c.start;
        if (from >= c.text.length) continue;
      } else if (covered >= 0 && c.start > covered && lastChar !== 10) {
        // A gap the chunker left out: keep the two sides on separate lines.
        parts.push('\n');
        length++;
      }
      doc = c.start + from;
    } else {
      if (length > 0 && lastChar !== 10) {
        parts.push('\n');
        length++;
      }
      doc = -1;
    }
    const piece = from > 0 ? c.text.slice(from) : c.text;
    if (piece.length === 0) continue;
    pieces.push({ at: length, len: piece.length, id: c.id, from, doc });
    parts.push(piece);
    length += piece.length;
    lastChar = piece.charCodeAt(piece.length - 1);
    covered = doc < 0 ? -1 : doc + piece.length;
  }
  return { text: parts.join(''), pieces, document: first?.document, end: covered };
}

/** The piece a position of the assembled text belongs to; a position on an inserted newline goes to the next piece. */
function locate(doc: DocText, pos: number): { piece: Piece; offset: number; documentOffset: number } {
  const { pieces } = doc;
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((pieces[mid] as Piece).at <= pos) lo = mid;
    else hi = mid - 1;
  }
  let piece = pieces[lo] as Piece;
  let inside = pos - piece.at;
  const next = pieces[lo + 1];
  if (next !== undefined && inside >= piece.len) {
    piece = next;
    inside = 0;
  }
  return {
    piece,
    offset: piece.from + inside,
    documentOffset: piece.doc < 0 ? -1 : piece.doc + inside,
  };
}

/** Builds the reported match for a hit at `start` of the assembled text. */
export function shapeMatch(doc: DocText, start: number, context: number): GrepMatch {
  const text = doc.text;
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  let lineEnd = text.indexOf('\n', start);
  if (lineEnd === -1) lineEnd = text.length;
  if (lineEnd > lineStart && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
  let from = lineStart;
  let to = lineEnd;
  if (to - from > MAX_LINE_CHARS) {
    from = Math.max(lineStart, start - LEAD_CHARS);
    to = Math.min(lineEnd, from + MAX_LINE_CHARS);
    // Near the line's end the window would shrink; slide it back so it stays full-width.
    if (to - from < MAX_LINE_CHARS) from = Math.max(lineStart, to - MAX_LINE_CHARS);
  }
  const line = `${from > lineStart ? ELLIPSIS : ''}${text.slice(from, to)}${to < lineEnd ? ELLIPSIS : ''}`;
  const at = locate(doc, start);
  // Copies, not views: a match is kept until the scan ends (merged in rank order), and a slice would
  // keep its whole document alive with it. A 100 MB grep held every document it matched in.
  const match: GrepMatch = {
    id: at.piece.id,
    offset: at.offset,
    text: ownString(line),
    before: context > 0 ? ownString(text.slice(Math.max(0, from - context), from)) : '',
    after: context > 0 ? ownString(text.slice(to, to + context)) : '',
  };
  const document = doc.document;
  if (document !== undefined) match.document = document;
  if (at.documentOffset >= 0 && document !== undefined) match.documentOffset = at.documentOffset;
  return match;
}
