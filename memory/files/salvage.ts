/**
 * Reading what is still readable of a damaged chunk file. Chunk files are the source of truth, so one
 * flipped byte must not cost every document of a segment: each chunk record is a JSON object of its
 * own, found by matching braces outside strings and parsed alone; records that do not parse or lack
 * their fields are left out, and the caller drops only the documents that lost a chunk.
 */
import type { ChunkRecord } from '../types.ts';

/** Records recovered from `raw` (a damaged `seg-N.chunks.json`), in file order. */
export function salvageChunks(raw: string): ChunkRecord[] {
  const out: ChunkRecord[] = [];
  let i = 0;
  while (i < raw.length) {
    // Records are written with `id` first; inside a JSON string the quotes would be escaped, so this
    // never lands in a chunk's text.
    const start = raw.indexOf(RECORD_START, i);
    if (start === -1) break;
    const end = matchingBrace(raw, start);
    const record = end === -1 ? null : parseRecord(raw.slice(start, end + 1));
    if (record) {
      out.push(record);
      i = end + 1;
    } else {
      // Not a whole record: resynchronise on the next record start.
      i = start + 1;
    }
  }
  return out;
}

const RECORD_START = '{"id":';

/** Index of the `}` closing the object opened at `start`, or -1. */
function matchingBrace(s: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d) {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

function parseRecord(text: string): ChunkRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const r = v as Partial<ChunkRecord> | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    typeof r.id !== 'string' ||
    typeof r.document !== 'string' ||
    typeof r.text !== 'string' ||
    typeof r.ordinal !== 'number' ||
    r.id !== `${r.document}:${r.ordinal}`
  ) {
    return null;
  }
  return r as ChunkRecord;
}
