/**
 * Reading the context on the host, for the host calls that need its text there: slices of the documents
 * read as one text, and greps over a run's --context files when the isolate does not hold them (too large
 * for it). The host keeps no text of --context files: what these read is read from the files for the call
 * and dropped after it.
 */
import { type GrepChunk, GrepRunner } from '../../memory/grep/grep.ts';
import type { GrepOptions, GrepResult } from '../../memory/types.ts';
import type { ContextFileRef } from './host.ts';

/** `[start, end)` of a text of `length`, negative positions counting from its end. */
export function clamp(length: number, start: number, end: number): [number, number] {
  const s = start < 0 ? Math.max(0, length + start) : Math.min(start, length);
  const e = end < 0 ? Math.max(0, length + end) : Math.min(end, length);
  return [s, Math.max(s, e)];
}

/** Length of texts of `lengths` joined by a newline, as the whole context reads them. */
export function joinedLength(lengths: readonly number[]): number {
  return lengths.reduce((n, l, i) => n + l + (i > 0 ? 1 : 0), 0);
}

/**
 * Slice of all documents read as one text with a newline between documents (same as the isolate's).
 * `lengths` stand for documents not read (an empty string in `docs`).
 */
export function sliceDocuments(
  docs: readonly string[],
  start: number,
  end: number,
  lengths: readonly number[] = docs.map((d) => d.length),
): string {
  const [s, e] = clamp(joinedLength(lengths), start, end);
  let out = '';
  let base = 0;
  for (let i = 0; i < docs.length && base < e; i++) {
    if (i > 0) {
      if (base >= s && base < e) out += '\n';
      base += 1;
    }
    const d = docs[i]!;
    const from = Math.max(s - base, 0);
    const to = Math.min(e - base, d.length);
    if (to > from) out += d.slice(from, to);
    base += lengths[i]!;
  }
  return out;
}

/** The slice of a run's --context files read as one text (a newline between files), read from them. */
export async function sliceFiles(
  files: readonly ContextFileRef[],
  start: number,
  end: number,
): Promise<string> {
  const [s, e] = clamp(joinedLength(files.map((f) => f.text.chars)), start, end);
  // Only the files the range touches are read; the others are blanks of their length.
  const texts: string[] = [];
  let base = 0;
  for (const [i, f] of files.entries()) {
    if (i > 0) base += 1;
    const touched = base < e && base + f.text.chars > s;
    texts.push(touched ? await f.text.string() : '');
    base += f.text.chars;
  }
  const lengths = files.map((f) => f.text.chars);
  return sliceDocuments(texts, s, e, lengths);
}

/**
 * grep over a run's --context files too large for the isolate: their text read from the files for this
 * search only (the host keeps none of it), in a grep runner of its own.
 */
export async function grepFiles(
  files: readonly ContextFileRef[],
  pattern: string,
  opts: GrepOptions,
): Promise<GrepResult> {
  const wanted = opts.document === undefined ? null : new Set([opts.document].flat());
  const corpus: GrepChunk[] = [];
  for (const f of files)
    if (wanted === null || wanted.has(f.id))
      corpus.push({ id: f.id, text: await f.text.string(), document: f.id });
  const runner = new GrepRunner(corpus);
  try {
    return await runner.grep(pattern, opts);
  } finally {
    await runner.close();
  }
}
