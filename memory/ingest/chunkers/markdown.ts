/**
 * `markdown` chunker: one chunk per heading-bounded section (ATX `#` headings outside fenced code).
 * `section` is the heading path ("Guide > Install > Linux"), tags are its slugs. A section under
 * {@link TINY_TOKENS} tokens is merged into the next one when that one sits under the same parent (a
 * bare title followed by its first subsection, say); a section over `chunkTokens` is split with the
 * paragraph logic, each part keeping the section's heading path.
 */

import type { ChunkDraft } from '../../types.ts';
import { rangeTokens } from '../tokens.ts';
import { type ChunkerSettings, draft, forEachLine, isBlank, isCleanLineStart, slugify } from './common.ts';
import { paragraphChunks } from './paragraph.ts';

/** Sections smaller than this are merged forward. */
const TINY_TOKENS = 50;

// One blank, then the rest of the line: `[ \t]+(.*?)[ \t]*$` said the same, but retried a long run of blanks
// at every split (time quadratic in the line); the title is trimmed by headingTitle instead.
const HEADING = /^ {0,3}(#{1,6})(?:[ \t](.*))?$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** A heading-bounded range of a markdown document. */
export interface MarkdownSection {
  start: number;
  end: number;
  /** Heading titles from the top level down to this section's own heading (empty for text before any heading). */
  path: string[];
}

/** A run of sections emitted as one unit. */
interface Unit {
  start: number;
  end: number;
  paths: string[][];
  tokens: number;
}

/** Heading-bounded sections of `text`, in order. */
export function markdownSections(text: string): MarkdownSection[] {
  const sections: MarkdownSection[] = [];
  const stack: { level: number; title: string }[] = [];
  let fence: { char: string; length: number } | null = null;
  let sectionStart = 0;
  let path: string[] = [];
  forEachLine(text, 0, text.length, (start, end) => {
    if (!mayOpenBlock(text, start, end)) return;
    const line = text.slice(start, end).replace(/\r$/, '');
    const f = FENCE.exec(line);
    if (fence !== null) {
      if (f && f[1]![0] === fence.char && f[1]!.length >= fence.length && f[2]!.trim() === '') fence = null;
      return;
    }
    if (f && !(f[1]![0] === '`' && f[2]!.includes('`'))) {
      fence = { char: f[1]![0]!, length: f[1]!.length };
      return;
    }
    const h = HEADING.exec(line);
    if (!h || !isCleanLineStart(text, start)) return;
    const level = h[1]!.length;
    const title = headingTitle(h[2] ?? '');
    if (start > sectionStart) sections.push({ start: sectionStart, end: start, path });
    while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, title });
    path = stack.map((s) => s.title).filter((t) => t !== '');
    sectionStart = start;
  });
  if (sectionStart < text.length) sections.push({ start: sectionStart, end: text.length, path });
  return sections;
}

/** A heading's text without its blanks and its closing run of `#` (one that follows a blank, or stands alone). */
function headingTitle(rest: string): string {
  const blank = (i: number) => rest[i] === ' ' || rest[i] === '\t';
  let end = rest.length;
  while (end > 0 && blank(end - 1)) end--;
  let hashes = end;
  while (hashes > 0 && rest[hashes - 1] === '#') hashes--;
  if (hashes < end && (hashes === 0 || blank(hashes - 1))) end = hashes;
  return rest.slice(0, end).trim();
}

/**
 * False when the line `text[start, end)` can be neither a heading nor a fence (up to three spaces, then
 * `#`, a backtick or `~`): most lines, which are then not copied out and matched.
 */
function mayOpenBlock(text: string, start: number, end: number): boolean {
  let i = start;
  while (i < start + 3 && i < end && text.charCodeAt(i) === 0x20) i++;
  if (i >= end) return false;
  const c = text.charCodeAt(i);
  return c === 0x23 || c === 0x60 || c === 0x7e;
}

/** Markdown chunks of a whole document. */
export function markdownChunks(
  text: string,
  opts: Pick<ChunkerSettings, 'chunkTokens' | 'minTokens' | 'maxTokens'>,
): ChunkDraft[] {
  const out: ChunkDraft[] = [];
  const sections = markdownSections(text);
  let pending: Unit | null = null;
  sections.forEach((sec, i) => {
    // Counting stops past chunkTokens: such a section is split anyway, and the split counts for itself.
    const tokens = rangeTokens(text, sec.start, sec.end, opts.chunkTokens);
    let unit: Unit = { start: sec.start, end: sec.end, paths: [sec.path], tokens };
    if (pending !== null) {
      const parent = pending.paths[0]!.slice(0, -1);
      if (startsWith(sec.path, parent)) {
        unit = {
          start: pending.start,
          end: sec.end,
          paths: [...pending.paths, sec.path],
          tokens: pending.tokens + tokens,
        };
      } else {
        emitUnit(text, pending, opts, out);
      }
      pending = null;
    }
    if (unit.tokens < TINY_TOKENS && i < sections.length - 1) pending = unit;
    else emitUnit(text, unit, opts, out);
  });
  if (pending !== null) emitUnit(text, pending, opts, out);
  return out;
}

function emitUnit(
  text: string,
  unit: Unit,
  opts: Pick<ChunkerSettings, 'chunkTokens' | 'minTokens' | 'maxTokens'>,
  out: ChunkDraft[],
): void {
  if (isBlank(text, unit.start, unit.end)) return;
  const path = sectionPath(unit.paths);
  const tags = [...new Set(unit.paths.flat().map((t) => slugify(t)))].filter((t) => t !== '');
  const extra = { ...(path.length > 0 ? { section: path.join(' > ') } : {}), tags };
  if (unit.tokens > opts.chunkTokens) paragraphChunks(text, opts, unit.start, unit.end, extra, out);
  else out.push(draft(text, unit.start, unit.end, unit.tokens, extra));
}

/** The heading path naming a merged unit: what its headed sections have in common, else the first of them. */
function sectionPath(paths: string[][]): string[] {
  const headed = paths.filter((p) => p.length > 0);
  if (headed.length === 0) return [];
  let common = headed[0]!;
  for (const p of headed) {
    let n = 0;
    while (n < common.length && n < p.length && common[n] === p[n]) n++;
    common = common.slice(0, n);
  }
  return common.length > 0 ? common : headed[0]!;
}

function startsWith(path: string[], prefix: string[]): boolean {
  return prefix.length <= path.length && prefix.every((t, i) => path[i] === t);
}
