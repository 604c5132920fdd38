/**
 * `turn` chunker: chat transcripts, one chunk per exchange (a user message and the assistant replies
 * that follow it, up to the next user message). JSONL transcripts are handled in turn-jsonl.ts; plain
 * text transcripts are lines starting `User:` / `Human:` / `Assistant:` / `AI:`, and their chunks are
 * exact slices of the file. An exchange over `chunkTokens` is split with the size logic.
 */

import type { ChunkDraft } from '../../types.ts';
import { rangeTokens } from '../tokens.ts';
import { type ChunkerSettings, draft, forEachLine, isBlank, isCleanLineStart, packRange } from './common.ts';
import { lineChunks } from './lines.ts';
import { paragraphChunks } from './paragraph.ts';
import { isChatLine, jsonlTurnChunks } from './turn-jsonl.ts';

/** A speaker marker at the start of a line, optionally in bold: `User:`, `**Assistant:**`, `AI :`. */
const SPEAKER = /^[ \t]*(?:\*\*|__)?(user|human|assistant|ai)(?:\*\*|__)?[ \t]*:/i;

/** How much of a file the detectors look at. */
const SNIFF_CHARS = 1 << 20;
const SNIFF_LINES = 50;

type Opts = Pick<ChunkerSettings, 'chunkTokens' | 'minTokens' | 'maxTokens' | 'onNote'>;

/** Turn chunks of a transcript; falls back to lines (JSONL) or paragraphs (text) when it is not one. */
export function turnChunks(text: string, opts: Opts): ChunkDraft[] {
  if (firstNonBlank(text) === '{') {
    const drafts = jsonlTurnChunks(text, opts);
    if (drafts !== null) return drafts;
    opts.onNote('no chat messages found in JSONL; chunked by lines');
    return lineChunks(text, opts);
  }
  const drafts = plainTurnChunks(text, opts);
  if (drafts !== null) return drafts;
  opts.onNote('no User:/Assistant: lines found; chunked by paragraphs');
  return paragraphChunks(text, opts);
}

/** Exchanges of a plain text transcript, or null when no line starts with a user marker. */
function plainTurnChunks(text: string, opts: Opts): ChunkDraft[] | null {
  const starts: number[] = [];
  forEachLine(text, 0, text.length, (start, end) => {
    const m = SPEAKER.exec(text.slice(start, Math.min(end, start + 40)));
    if (m && isUserRole(m[1]!) && isCleanLineStart(text, start)) starts.push(start);
  });
  if (starts.length === 0) return null;
  const out: ChunkDraft[] = [];
  const emit = (start: number, end: number, tags: string[], section: string | undefined) => {
    if (isBlank(text, start, end)) return;
    const extra = { tags, ...(section !== undefined ? { section } : {}) };
    const tokens = rangeTokens(text, start, end, opts.chunkTokens);
    if (tokens <= opts.chunkTokens) {
      out.push(draft(text, start, end, tokens, extra));
      return;
    }
    packRange(
      text,
      start,
      end,
      { maxTokens: opts.chunkTokens, overlapTokens: 0, searchFrom: 0.9 },
      (s, e, t) => {
        if (!isBlank(text, s, e)) out.push(draft(text, s, e, t, extra));
      },
    );
  };
  if (starts[0]! > 0) emit(0, starts[0]!, ['role:preamble'], undefined);
  starts.forEach((start, i) => {
    emit(start, starts[i + 1] ?? text.length, ['role:exchange'], `turn ${i + 1}`);
  });
  return out;
}

function isUserRole(marker: string): boolean {
  const m = marker.toLowerCase();
  return m === 'user' || m === 'human';
}

function firstNonBlank(text: string): string {
  const m = /\S/.exec(text.slice(0, 4096));
  return m ? m[0] : '';
}

/** True when the first non-empty lines of a JSONL text are chat messages (Claude Code or role/content). */
export function looksLikeChatJsonl(text: string): boolean {
  let seen = 0;
  let found = false;
  forEachLine(text, 0, Math.min(text.length, SNIFF_CHARS), (start, end) => {
    if (found || seen >= SNIFF_LINES || isBlank(text, start, end)) return;
    seen++;
    try {
      found = isChatLine(JSON.parse(text.slice(start, end)));
    } catch {
      // a line cut by the sniff window, or junk: judge by the others
    }
  });
  return found;
}

/** True when the start of a text reads like a `User:` / `Assistant:` transcript. */
export function looksLikeTranscript(text: string): boolean {
  let users = 0;
  let assistants = 0;
  let lines = 0;
  forEachLine(text, 0, Math.min(text.length, SNIFF_CHARS), (start, end) => {
    if (lines++ >= 400) return;
    const m = SPEAKER.exec(text.slice(start, Math.min(end, start + 40)));
    if (!m) return;
    if (isUserRole(m[1]!)) users++;
    else assistants++;
  });
  return users > 0 && assistants > 0;
}
