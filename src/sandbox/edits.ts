/**
 * Text edits on a block with position mapping back to the original, so errors raised in rewritten
 * code are reported where the model wrote them.
 */
import { lastAtMost } from '../../core/last-at-most.ts';

interface Edit {
  start: number;
  end: number;
  text: string;
  /** Order of insertion, to keep several insertions at one offset in call order. */
  seq: number;
}

/** Offsets of line starts in `text`. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line and 0-based column of `offset`. */
function positionOf(starts: readonly number[], offset: number): { line: number; column: number } {
  const lo = lastAtMost(starts, offset);
  return { line: lo + 1, column: offset - starts[lo]! };
}

/** Non-overlapping replacements over a source text. */
export class SourceEdits {
  readonly source: string;
  private readonly edits: Edit[] = [];

  constructor(source: string) {
    this.source = source;
  }

  /** Replaces `[start, end)`; `start === end` inserts. */
  replace(start: number, end: number, text: string): void {
    this.edits.push({ start, end, text, seq: this.edits.length });
  }

  insert(at: number, text: string): void {
    this.replace(at, at, text);
  }

  private sorted(): Edit[] {
    return [...this.edits].sort((a, b) => a.start - b.start || a.end - b.end || a.seq - b.seq);
  }

  /** The edited text and a function mapping its 1-based line / 0-based column to the original's. */
  apply(): { text: string; mapPosition: (line: number, column: number) => { line: number; column: number } } {
    const edits = this.sorted();
    let text = '';
    let cursor = 0;
    // Segments: [genStart, origStart, length] for unchanged text; replacements map to their start.
    const segments: { gen: number; orig: number; len: number; replaced: boolean }[] = [];
    for (const e of edits) {
      if (e.start > cursor) {
        segments.push({ gen: text.length, orig: cursor, len: e.start - cursor, replaced: false });
        text += this.source.slice(cursor, e.start);
      }
      segments.push({ gen: text.length, orig: e.start, len: e.text.length, replaced: true });
      text += e.text;
      cursor = Math.max(cursor, e.end);
    }
    segments.push({ gen: text.length, orig: cursor, len: this.source.length - cursor, replaced: false });
    text += this.source.slice(cursor);

    const genStarts = lineStarts(text);
    const origStarts = lineStarts(this.source);
    const mapPosition = (line: number, column: number) => {
      const lineStart = genStarts[Math.min(Math.max(line - 1, 0), genStarts.length - 1)] ?? 0;
      const gen = lineStart + Math.max(column, 0);
      let orig = this.source.length;
      for (const s of segments) {
        if (gen < s.gen + s.len || (s.len === 0 && gen === s.gen)) {
          orig = s.replaced ? s.orig : s.orig + (gen - s.gen);
          break;
        }
      }
      return positionOf(origStarts, Math.min(orig, this.source.length));
    };
    return { text, mapPosition };
  }
}
