/**
 * Reading a big file as a stream of parts, so an ingest's memory does not grow with one file's size
 * (memory/SCHEMA.md: documents `ID`, `ID.p2`, ...).
 */
import { isUtf8 } from 'node:buffer';
import { extname } from 'node:path';
import {
  BINARY_EXTENSIONS,
  decodeDocument,
  openDocument,
  type ReadResult,
  readDocument,
  unreadable,
} from './read-document.ts';

/**
 * Files larger than this are read as a stream and stored as parts of about this size (see SCHEMA.md):
 * half a segment's text. A part is one string while it is read, hashed and chunked; at 4 MiB (a whole
 * batch in one string) one 100 MB file peaked at 232 MB against 183 MB for the same text in 200 KB
 * files, and at 2 MiB at 199-204 MB (1 MiB: 195-199 MB, for twice the documents).
 */
export const PART_BYTES = 2 * 1024 * 1024;

/** What {@link readDocumentParts} yields: parts (or why the file is not read), then maybe a note. */
export type PartResult = ReadResult | { changed: true; note: string };

/**
 * A file as one text (see {@link readDocument}), or, when larger than `partBytes`, as a stream of parts
 * of about `partBytes` cut after a line end, so memory stays flat whatever the file's size. Only the
 * first part is sniffed for binary content; `.gz` and UTF-16 files are read whole.
 *
 * `size` is the file's size when it was scanned, and no more is read: a file written to meanwhile (a
 * live log, growing faster than it is read) is read as of the scan, never without end. When the file's
 * size is no longer `size` (it grew, or shrank and its end came first), a `{ changed }` note follows the
 * last part.
 */
export async function* readDocumentParts(
  path: string,
  size: number,
  partBytes = PART_BYTES,
): AsyncGenerator<PartResult> {
  const ext = extname(path).slice(1).toLowerCase();
  if (ext === 'gz' || BINARY_EXTENSIONS.has(ext)) {
    yield await readDocument(path);
    return;
  }
  const opened = await openDocument(path);
  if ('note' in opened) {
    yield opened;
    return;
  }
  const { handle, st } = opened;
  try {
    // Two part-sized buffers, filled in place in turn (the tail after a cut moves to the other): no
    // garbage per part, whatever the file's size. A part's text is decoded before its buffer is reused.
    let buf: Buffer = Buffer.allocUnsafe(Math.min(size, partBytes));
    let spare: Buffer | undefined;
    let filled = 0;
    /** Bytes read from the file, at most `size`. */
    let read = 0;
    let first = true;
    for (;;) {
      const want = Math.min(buf.length - filled, size - read);
      let bytesRead = 0;
      try {
        if (want > 0) ({ bytesRead } = await handle.read(buf, filled, want, null));
      } catch (err) {
        // As for a file read whole; a failure past the first part fails the ingest, as it always has.
        if (!first) throw err;
        yield unreadable(err);
        return;
      }
      filled += bytesRead;
      read += bytesRead;
      const done = bytesRead === 0 || read === size;
      if (filled < buf.length && !done) continue;
      // The file ended where a part did: it shrank since the scan.
      if (filled === 0 && !first) break;
      const cut = done ? filled : cutPoint(buf, buf.length);
      const piece = buf.subarray(0, cut);
      let part: ReadResult;
      if (first) {
        first = false;
        part = decodeDocument(piece);
        // UTF-16 or binary: decided on the first part, like a whole file (UTF-16 in parts is read whole).
        if (!('text' in part) || (!done && part.notes.some((n) => n.startsWith('decoded as')))) {
          yield 'text' in part ? await readDocument(path) : part;
          return;
        }
      } else {
        part = {
          text: new TextDecoder('utf-8').decode(piece),
          notes: isUtf8(piece) ? [] : ['invalid UTF-8 replaced'],
        };
      }
      if (cut < filled) {
        spare ??= Buffer.allocUnsafe(buf.length);
        filled = buf.copy(spare, 0, cut, filled);
        [buf, spare] = [spare, buf];
      } else filled = 0;
      yield part;
      if (done && filled === 0) break;
    }
    // One stat when a file read whole had its scanned size when opened (the usual file), one more else.
    const now = read === size && size <= partBytes && st.size === size ? size : (await handle.stat()).size;
    const note = sizeChangeNote(size, now, read);
    if (note !== null) yield { changed: true, note };
  } finally {
    await handle.close();
  }
}

/**
 * Why a file's stored text is not the file as it is now, or null when its size is still `scanned` and
 * all of it was read: it grew (read as of the scan), or it shrank (read as far as it went).
 */
function sizeChangeNote(scanned: number, now: number, read: number): string | null {
  if (read === scanned && now === scanned) return null;
  const sizes = `${scanned} bytes then, ${now} now`;
  if (read === scanned)
    return `${now > scanned ? 'grew' : 'shrank'} since it was scanned (${sizes}): ingested as of the scan`;
  return `shrank since it was scanned (${sizes}): only the ${read} bytes read before its end are ingested`;
}

/**
 * Where to end a part of the first `max` bytes: after the last line end, when one falls in their second
 * half, else at the last UTF-8 character boundary (a character the part would split goes to the next).
 */
export function cutPoint(bytes: Buffer, max: number): number {
  const nl = bytes.lastIndexOf(0x0a, max - 1);
  if (nl > max / 2) return nl + 1;
  return charBoundary(bytes, max);
}

/**
 * `end`, or the start of the UTF-8 character that `bytes[0, end)` cuts short. Bytes that are not UTF-8
 * are left where they are (a lead byte is looked for only among the last four).
 */
export function charBoundary(bytes: Uint8Array, end: number): number {
  for (let i = end - 1, back = 0; i >= 0 && back < 4; i--, back++) {
    const b = bytes[i]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need <= end ? end : i;
  }
  return end;
}
