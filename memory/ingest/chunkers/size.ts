/**
 * `size` chunker: fixed token windows with overlap, for text with no usable structure (a 50 MB
 * single-line file included). Cuts fall between tokenizer pieces, at a blank line, sentence end or line
 * break when one sits in the last tenth of the window.
 */

import type { ChunkDraft } from '../../types.ts';
import { type ChunkerSettings, type DraftExtra, draft, isBlank, packRange } from './common.ts';

/** Share of a window after which a nicer cut is preferred over the hard limit. */
const SEARCH_FROM = 0.9;

/** Windows of `opts.chunkTokens` tokens over `text[from, to)`, overlapping by `opts.overlapTokens`. */
export function sizeChunks(
  text: string,
  opts: Pick<ChunkerSettings, 'chunkTokens' | 'overlapTokens'>,
  from = 0,
  to = text.length,
  extra: DraftExtra = {},
): ChunkDraft[] {
  const out: ChunkDraft[] = [];
  packRange(
    text,
    from,
    to,
    { maxTokens: opts.chunkTokens, overlapTokens: opts.overlapTokens, searchFrom: SEARCH_FROM },
    (start, end, tokens) => {
      if (!isBlank(text, start, end)) out.push(draft(text, start, end, tokens, extra));
    },
  );
  return out;
}
