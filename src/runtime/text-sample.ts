/**
 * What a text looks like, for the prompt: its first lines, how blank lines split it, and which line
 * starts recur (a record's first field, a signature line), measured on its beginning. A model that knows
 * the records' shape splits on them instead of on chunk edges, which do not follow records.
 */
import type { TextSample } from '../prompts/shape.ts';

/** Characters looked at: enough for hundreds of records, cheap over any size. */
const WINDOW = 256 * 1024;
const FIRST_LINES = 5;
const LINE_CHARS = 120;
/** Line starts reported, and how often one must recur to count. */
const MAX_STARTS = 3;
const MIN_REPEATS = 5;
/** A line start: leading blanks, then a `Key:` field name, a `-- `-like marker, or the first word. */
const START = /^([ \t]*)(?:([A-Za-z][\w.-]{0,30}:)(?=\s|$)|([-=*#>+|]{1,4})(?=\s)|(\S{1,16}))/;

/** The key of a line for counting recurring starts; null for a line that starts with a number or nothing. */
function lineStart(line: string): string | null {
  const m = START.exec(line);
  if (m === null) return null;
  const [, lead = '', field, marker, word] = m;
  if (field !== undefined) return `${lead}${field}`;
  if (marker !== undefined) return `${lead}${marker} `;
  // A bare first word only counts when it is the same word each time (a record type, a level).
  if (word === undefined || /\d/.test(word)) return null;
  return `${lead}${word} `;
}

/** Measures the beginning of `text`. */
export function sampleText(text: string): TextSample {
  let window = Math.min(text.length, WINDOW);
  if (window < text.length) {
    // End on a line, so the last line counted is whole.
    const nl = text.lastIndexOf('\n', window);
    if (nl > 0) window = nl + 1;
  }
  const head = text.slice(0, window);
  const all = head.split('\n');
  const lines: string[] = [];
  const counts = new Map<string, number>();
  let blankRuns = 0;
  let blank = false;
  let seenText = false;
  for (const raw of all) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') {
      if (seenText && !blank) blankRuns++;
      blank = true;
      continue;
    }
    blank = false;
    seenText = true;
    if (lines.length < FIRST_LINES)
      lines.push(line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line);
    const key = lineStart(line);
    if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  // A trailing run of blank lines separates nothing.
  if (blank && blankRuns > 0) blankRuns--;
  // Map order is first appearance: on a tie, the field a record starts with comes first.
  const starts = [...counts.entries()]
    .filter(([, n]) => n >= MIN_REPEATS)
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_STARTS)
    .map(([start, n]) => ({ start, lines: n }));
  return { lines, window, blankRuns, starts };
}
