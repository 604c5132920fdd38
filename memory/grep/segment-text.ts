/**
 * A segment's text column, `seg-N.text`: the chunk texts of the segment back to back in UTF-8, after a
 * one-line JSON header that says how many bytes each chunk takes and which documents own them. It is
 * derived from the chunk file (the source of truth, from which `rlm repair` rebuilds it) and exists for
 * speed: a chunk's text is a slice of the file to decode, where the chunk file's JSON must be parsed
 * whole, so grep can scan a segment chunk by chunk without holding it (see grep-worker.ts). Readers
 * fall back to the chunk file when the column is missing or does not check out.
 *
 * Pure functions over strings and bytes, no I/O, so the grep worker uses them too. Format: memory/SCHEMA.md.
 */

/** Version of the header; a reader that does not know it uses the chunk file. */
const TEXT_VERSION = 1;
const NEWLINE = 0x0a;

/** A document's run of chunks in the segment: the same as the meta file's `docs`. */
export interface TextDocRun {
  id: string;
  first: number;
  count: number;
}

interface TextHeader {
  version: number;
  segment: string;
  docs: TextDocRun[];
  /** UTF-8 byte length of each chunk's text, in chunk order. */
  bytes: number[];
}

/** Where each chunk's text is in a text file read as bytes: chunk `i` is `[at[i], at[i + 1])`. */
export interface TextColumn {
  docs: TextDocRun[];
  at: number[];
}

/** The file's contents for `texts` (in chunk order) owned by the runs `docs`, in pieces to write in order. */
export function* segmentTextPieces(
  segment: string,
  docs: readonly TextDocRun[],
  texts: readonly string[],
): Generator<string> {
  const header: TextHeader = {
    version: TEXT_VERSION,
    segment,
    docs: docs.map((d) => ({ id: d.id, first: d.first, count: d.count })),
    bytes: texts.map((t) => Buffer.byteLength(t, 'utf8')),
  };
  yield `${JSON.stringify(header)}\n`;
  yield* texts;
}

function validHeader(h: unknown, segment: string): h is TextHeader {
  if (typeof h !== 'object' || h === null) return false;
  const { version, segment: name, docs, bytes } = h as Partial<TextHeader>;
  if (version !== TEXT_VERSION || name !== segment || !Array.isArray(docs) || !Array.isArray(bytes))
    return false;
  let next = 0;
  for (const d of docs) {
    if (typeof d?.id !== 'string' || d.first !== next || !Number.isInteger(d.count) || d.count < 1)
      return false;
    next += d.count;
  }
  return next === bytes.length && bytes.every((n) => Number.isInteger(n) && n >= 0);
}

/**
 * Reads the header of a text file held in `bytes[0, size)`. Null when it is not one for `segment` or the
 * lengths do not add up to the file (torn, edited, another version): the chunk file, which holds the
 * same text, is then the one to read.
 */
export function readTextColumn(bytes: Buffer, size: number, segment: string): TextColumn | null {
  const nl = bytes.subarray(0, size).indexOf(NEWLINE);
  if (nl === -1) return null;
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString('utf8', 0, nl));
  } catch {
    return null;
  }
  if (!validHeader(header, segment)) return null;
  const at: number[] = new Array(header.bytes.length + 1);
  let offset = nl + 1;
  for (const [i, n] of header.bytes.entries()) {
    at[i] = offset;
    offset += n;
  }
  at[header.bytes.length] = offset;
  return offset === size ? { docs: header.docs, at } : null;
}

/**
 * Every chunk's text of a text file (see {@link readTextColumn}), in chunk order. Null when it does not
 * check out, or when its runs are not `expected` (the meta file's): a column that an older rlm left
 * beside chunk and meta files it rewrote describes the old layout.
 */
export function decodeSegmentText(
  bytes: Buffer,
  segment: string,
  expected: readonly TextDocRun[],
): string[] | null {
  const column = readTextColumn(bytes, bytes.length, segment);
  if (!column || column.docs.length !== expected.length) return null;
  for (const [i, run] of column.docs.entries()) {
    const want = expected[i]!;
    if (run.id !== want.id || run.first !== want.first || run.count !== want.count) return null;
  }
  const texts: string[] = [];
  for (let i = 0; i + 1 < column.at.length; i++)
    texts.push(bytes.toString('utf8', column.at[i], column.at[i + 1]));
  return texts;
}
