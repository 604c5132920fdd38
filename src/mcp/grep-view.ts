/**
 * What `rlm_grep` sends back, bounded in characters: a result goes into the caller's context window, and a
 * match in a minified file or a log with endless lines must not flood it. Lines are cut to a window around
 * the match, optional context lines come from the chunk's text, and matches stop at a character budget.
 */
import type { GrepMatch } from '../../memory/types.ts';

/** One match as `rlm_grep` returns it. */
export interface GrepView {
  id: string;
  offset: number;
  text: string;
  /** Up to `contextLines` lines before the match line, joined by newlines (only when asked for). */
  before?: string;
  after?: string;
}

/** Bounds of {@link grepView}. */
export interface GrepViewBounds {
  /** Characters of all texts together. */
  maxChars: number;
  /** Characters of one line; a longer one is cut to a window around the match. */
  maxLineChars: number;
  /** Lines of context either side (0: none). */
  contextLines: number;
}

/**
 * Shapes matches within the bounds. `chunkText` gives a chunk's text (for context lines). `truncated` is
 * set when matches were left out because of the character budget.
 */
export function grepView(
  matches: readonly GrepMatch[],
  chunkText: (id: string) => string | undefined,
  bounds: GrepViewBounds,
): { matches: GrepView[]; truncated: boolean } {
  const out: GrepView[] = [];
  let used = 0;
  for (const m of matches) {
    const text = chunkText(m.id);
    const view: GrepView = {
      id: m.id,
      offset: m.offset,
      text: cutLine(m.text, text, m.offset, bounds.maxLineChars),
    };
    if (bounds.contextLines > 0 && text !== undefined) {
      const { before, after } = contextLines(text, m.offset, bounds.contextLines, bounds.maxLineChars);
      view.before = before;
      view.after = after;
    }
    const size = view.text.length + (view.before?.length ?? 0) + (view.after?.length ?? 0);
    if (out.length > 0 && used + size > bounds.maxChars) return { matches: out, truncated: true };
    used += size;
    out.push(view);
  }
  return { matches: out, truncated: false };
}

/** The match line, or a window of it around the match when it is longer than `max`. */
function cutLine(line: string, chunk: string | undefined, offset: number, max: number): string {
  if (line.length <= max) return line;
  const lineStart = chunk === undefined ? 0 : chunk.lastIndexOf('\n', offset - 1) + 1;
  const at = Math.max(0, Math.min(line.length, offset - lineStart));
  const from = Math.max(0, Math.min(at - Math.floor(max / 2), line.length - max));
  return `${from > 0 ? '…' : ''}${line.slice(from, from + max)}${from + max < line.length ? '…' : ''}`;
}

function contextLines(
  text: string,
  offset: number,
  n: number,
  maxLine: number,
): { before: string; after: string } {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const nextBreak = text.indexOf('\n', offset);
  const lineEnd = nextBreak < 0 ? text.length : nextBreak;
  const before =
    lineStart === 0
      ? []
      : text
          .slice(0, lineStart - 1)
          .split('\n')
          .slice(-n);
  const after = lineEnd >= text.length ? [] : text.slice(lineEnd + 1).split('\n', n);
  const cut = (l: string) => (l.length <= maxLine ? l : `${l.slice(0, maxLine)}…`);
  return { before: before.map(cut).join('\n'), after: after.map(cut).join('\n') };
}
