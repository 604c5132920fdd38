/**
 * `paragraph` chunker: blank-line separated paragraphs, small ones merged with the following ones until
 * a chunk is worth keeping (min tokens), big ones split at sentence ends (max tokens).
 *
 * A paragraph's range runs from its first line to the next paragraph's first line, so it carries its
 * trailing blank lines; those starts are clean cuts, so merged counts are plain sums.
 */

import type { ChunkDraft } from '../../types.ts';
import { rangeTokens } from '../tokens.ts';
import {
  type ChunkerSettings,
  type DraftExtra,
  draft,
  forEachLine,
  isBlank,
  isCleanLineStart,
  packRange,
} from './common.ts';

/** When splitting a long paragraph, a sentence end anywhere past this share of the window is taken. */
const SENTENCE_SEARCH_FROM = 0.25;

/** Paragraph chunks of `text[from, to)`, appended to `out` (also returned). */
export function paragraphChunks(
  text: string,
  opts: Pick<ChunkerSettings, 'minTokens' | 'maxTokens'>,
  from = 0,
  to = text.length,
  extra: DraftExtra = {},
  out: ChunkDraft[] = [],
): ChunkDraft[] {
  const { minTokens, maxTokens } = opts;
  const firstOwn = out.length;
  let groupStart = -1;
  let groupEnd = -1;
  let groupTokens = 0;
  /** Index in `out` of the last draft built from whole paragraphs, for the trailing merge. */
  let lastGroup = -1;

  const flush = () => {
    if (groupStart < 0) return;
    if (!isBlank(text, groupStart, groupEnd)) {
      out.push(draft(text, groupStart, groupEnd, groupTokens, extra));
      lastGroup = out.length - 1;
    }
    groupStart = -1;
    groupTokens = 0;
  };

  const addParagraph = (start: number, end: number) => {
    const tokens = rangeTokens(text, start, end, maxTokens);
    if (tokens > maxTokens) {
      flush();
      packRange(
        text,
        start,
        end,
        { maxTokens, overlapTokens: 0, searchFrom: SENTENCE_SEARCH_FROM },
        (s, e, t) => {
          if (!isBlank(text, s, e)) out.push(draft(text, s, e, t, extra));
        },
      );
      return;
    }
    if (groupStart >= 0 && groupTokens + tokens > maxTokens) flush();
    if (groupStart < 0) groupStart = start;
    groupEnd = end;
    groupTokens += tokens;
    if (groupTokens >= minTokens) flush();
  };

  let paraStart = from;
  let prevBlank = false;
  forEachLine(text, from, to, (start, end) => {
    const blank = isBlank(text, start, end);
    if (!blank && prevBlank && start > paraStart && isCleanLineStart(text, start)) {
      addParagraph(paraStart, start);
      paraStart = start;
    }
    prevBlank = blank;
  });
  if (paraStart < to) addParagraph(paraStart, to);
  flush();

  // A small last group is folded into the draft before it when that one is adjacent and has room.
  const last = out.length - 1;
  if (last === lastGroup && last > firstOwn) {
    const tail = out[last]!;
    const prev = out[last - 1]!;
    if (tail.tokens < minTokens && prev.end === tail.start && prev.tokens + tail.tokens <= maxTokens) {
      out.splice(last - 1, 2, draft(text, prev.start, tail.end, prev.tokens + tail.tokens, extra));
    }
  }
  return out;
}
