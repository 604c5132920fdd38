/**
 * A document's text, rebuilt from its chunks: every chunker but `turn` on JSONL cuts chunks out of the
 * text with nothing left between them (memory/ingest/chunkers/index.ts), so the chunks, their overlap
 * dropped, are the text, in the document's own offsets. A transcript read from JSONL keeps no source
 * text (a chunk is a rendered exchange, its offsets those of the source lines): its text is the
 * rendered exchanges joined by blank lines. A file stored in parts reads as the parts one after the other,
 * which is the file's text (parts are cut after a line end).
 */
import type { ChunkRecord, DocumentRecord, DocumentText, TextRange } from '../types.ts';

/** What separates rendered exchanges in the text of a transcript that has no source text. */
const RENDERED_SEPARATOR = '\n\n';

/** A run of the text: where it starts in the whole text, and its characters. */
interface Piece {
  at: number;
  text: string;
}

/** The text of `docs` read in order (one document, or a file's parts), or its slice `range`. */
export function documentText(
  getChunk: (id: string) => ChunkRecord | undefined,
  docs: DocumentRecord[],
  range: TextRange = {},
): DocumentText {
  const pieces: Piece[] = [];
  let length = 0;
  for (const doc of docs) {
    const chunks: ChunkRecord[] = [];
    for (let i = 0; i < doc.chunks; i++) {
      const c = getChunk(`${doc.id}:${i}`);
      if (c) chunks.push(c);
    }
    length = appendPieces(pieces, chunks, length);
  }
  const [start, end] = bounds(length, range);
  let text = '';
  for (const p of pieces) {
    const to = p.at + p.text.length;
    if (to <= start) continue;
    if (p.at >= end) break;
    text += p.text.slice(Math.max(0, start - p.at), Math.min(p.text.length, end - p.at));
  }
  return { documents: docs, text, start, end, length };
}

/** Adds one document's pieces after `base` characters; returns the length read so far. */
function appendPieces(pieces: Piece[], chunks: ChunkRecord[], base: number): number {
  const cut = chunks.every(
    (c, i) => c.text.length === c.end - c.start && c.start <= (chunks[i - 1]?.end ?? 0),
  );
  if (!cut) {
    let at = base;
    for (const [i, c] of chunks.entries()) {
      const text = i === 0 ? c.text : RENDERED_SEPARATOR + c.text;
      pieces.push({ at, text });
      at += text.length;
    }
    return at;
  }
  let end = 0;
  for (const c of chunks) {
    if (c.end <= end) continue;
    pieces.push({ at: base + Math.max(c.start, end), text: c.text.slice(Math.max(0, end - c.start)) });
    end = c.end;
  }
  return base + end;
}

/** `range` as String.prototype.slice reads it: clamped to the text, negative counting from the end. */
function bounds(length: number, range: TextRange): [number, number] {
  const at = (v: number | undefined, fallback: number) => {
    if (v === undefined || !Number.isFinite(v)) return fallback;
    const n = Math.trunc(v);
    return n < 0 ? Math.max(0, length + n) : Math.min(n, length);
  };
  const start = at(range.start, 0);
  return [start, Math.max(start, at(range.end, length))];
}
