/**
 * `lines` chunker: runs of whole lines up to a token budget, for logs, CSV, JSONL and source code.
 * When a group must close, it closes at the last "natural" break in its second half if there is one —
 * after a blank line, before a top-level declaration, after a closing brace in column 0 — so code is
 * cut between functions rather than inside them. A single line over the budget goes to the packer.
 *
 * Blank lines stay attached to the line before them, so every group starts at a clean line start and
 * group counts are plain sums of line counts.
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

/** A line starting one of these (in column 0) opens a top-level declaration in common languages. */
const DECLARATION =
  /^(?:export|import|from|def|class|function|async|fn|pub|impl|struct|enum|trait|interface|type|const|let|var|func|package|module|public|private|protected|internal|static|abstract|final|sealed|object|namespace|template|typedef|union|macro_rules!|describe|it|test|CREATE|ALTER|INSERT|SELECT|#include|#define|#pragma|@[A-Za-z])\b/;

/** A column-0 line closing a block. */
const CLOSING = /^(?:[}\])]+[;,)]*|end|fi|done|esac)\s*$/;

/** Lowest share of the budget a group must reach before a natural break may close it early. */
const NATURAL_BREAK_FROM = 0.5;

/** Line groups of `text[from, to)` with at most `opts.maxTokens` tokens each (unless one line is bigger). */
export function lineChunks(
  text: string,
  opts: Pick<ChunkerSettings, 'maxTokens'>,
  from = 0,
  to = text.length,
  extra: DraftExtra = {},
): ChunkDraft[] {
  const budget = opts.maxTokens;
  const out: ChunkDraft[] = [];
  // The open group, one entry per unit (a non-blank line plus the blank lines after it).
  let starts: number[] = [];
  let cum: number[] = [];
  let natural: boolean[] = [];
  let groupEnd = from;

  const emit = (start: number, end: number, tokens: number) => {
    if (!isBlank(text, start, end)) out.push(draft(text, start, end, tokens, extra));
  };

  /** Emits units [0, k) of the group and keeps the rest open. */
  const emitHead = (k: number) => {
    const end = k < starts.length ? starts[k]! : groupEnd;
    emit(starts[0]!, end, cum[k - 1]!);
    const base = cum[k - 1]!;
    starts = starts.slice(k);
    natural = natural.slice(k);
    cum = cum.slice(k).map((c) => c - base);
  };

  let unitStart = from;
  // Whether the open unit may start a group early, and whether the last line seen closes a block.
  let unitNatural = true;
  let sawBlank = false;
  let prevClosing = false;

  const addUnit = (start: number, end: number, startsNatural: boolean) => {
    const tokens = rangeTokens(text, start, end, budget);
    if (tokens > budget) {
      if (starts.length > 0) emitHead(starts.length);
      packRange(text, start, end, { maxTokens: budget, overlapTokens: 0, searchFrom: 0.9 }, emit);
      return;
    }
    const total = cum.length > 0 ? cum[cum.length - 1]! : 0;
    if (starts.length > 0 && total + tokens > budget) {
      let k = -1;
      for (let i = starts.length - 1; i > 0; i--) {
        if (cum[i - 1]! < budget * NATURAL_BREAK_FROM) break;
        if (natural[i]) {
          k = i;
          break;
        }
      }
      emitHead(k > 0 ? k : starts.length);
      const rest = cum.length > 0 ? cum[cum.length - 1]! : 0;
      if (starts.length > 0 && rest + tokens > budget) emitHead(starts.length);
    }
    starts.push(start);
    natural.push(startsNatural);
    cum.push((cum.length > 0 ? cum[cum.length - 1]! : 0) + tokens);
    groupEnd = end;
  };

  forEachLine(text, from, to, (start, end) => {
    if (isBlank(text, start, end)) {
      sawBlank = true;
      return;
    }
    if (start > unitStart && isCleanLineStart(text, start)) {
      addUnit(unitStart, start, unitNatural);
      unitStart = start;
      const c = text.charCodeAt(start);
      const column0 = c !== 32 && c !== 9;
      const line = text.slice(start, Math.min(end, start + 200));
      unitNatural = sawBlank || prevClosing || (column0 && DECLARATION.test(line));
      prevClosing = column0 && CLOSING.test(line);
    } else if (start === unitStart) {
      const c = text.charCodeAt(start);
      prevClosing = c !== 32 && c !== 9 && CLOSING.test(text.slice(start, Math.min(end, start + 200)));
    }
    sawBlank = false;
  });
  if (unitStart < to) addUnit(unitStart, to, unitNatural);
  if (starts.length > 0) emitHead(starts.length);
  return out;
}
