/**
 * Reading a big file as a stream of parts, so an ingest's memory does not grow with one file's size
 * (memory/SCHEMA.md: documents `ID`, `ID.p2`, ...).
 */
import { isUtf8 } from 'node:buffer';
import { constants, promises as fs } from 'node:fs';
import { extname } from 'node:path';
import {
  BINARY_EXTENSIONS,
  decodeDocument,
  errorText,
  type ReadResult,
  readDocument,
  specialKind,
} from './files.ts';

/**
 * Files larger than this are read as a stream and stored as parts of about this size (see SCHEMA.md):
 * half a segment's text. A part is one string while it is read, hashed and chunked; at 4 MiB (a whole
 * batch in one string) one 100 MB file peaked at 232 MB against 183 MB for the same text in 200 KB
 * files, and at 2 MiB at 199-204 MB (1 MiB: 195-199 MB, for twice the documents).
 */
export const PART_BYTES = 2 * 1024 * 1024;

/**
 * A file as one text (see {@link readDocument}), or, when larger than `partBytes`, as a stream of parts
 * of about `partBytes` cut after a line end, so memory stays flat whatever the file's size. Only the
 * first part is sniffed for binary content; `.gz` and UTF-16 files are read whole.
 */
export async function* readDocumentParts(
  path: string,
  size: number,
  partBytes = PART_BYTES,
): AsyncGenerator<ReadResult> {
  const ext = extname(path).slice(1).toLowerCase();
  if (size <= partBytes || ext === 'gz' || BINARY_EXTENSIONS.has(ext)) {
    yield await readDocument(path);
    return;
  }
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    yield { unreadable: true, note: `unreadable (${errorText(err)}), skipped` };
    return;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      yield { unreadable: true, note: `${specialKind(st)} skipped (not a regular file)` };
      return;
    }
    // Two part-sized buffers, filled in place in turn (the tail after a cut moves to the other): no
    // garbage per part, whatever the file's size. A part's text is decoded before its buffer is reused.
    let buf = Buffer.allocUnsafe(partBytes);
    let spare = Buffer.allocUnsafe(partBytes);
    let filled = 0;
    let first = true;
    for (;;) {
      const { bytesRead } = await handle.read(buf, filled, partBytes - filled, null);
      filled += bytesRead;
      const done = bytesRead === 0;
      if (filled < partBytes && !done) continue;
      if (filled === 0) return;
      const cut = done ? filled : cutPoint(buf, partBytes);
      const piece = buf.subarray(0, cut);
      let part: ReadResult;
      if (first) {
        first = false;
        part = decodeDocument(piece);
        // UTF-16 or binary: decided on the first part, like a whole file.
        if (!('text' in part) || part.notes.some((n) => n.startsWith('decoded as'))) {
          yield 'text' in part ? await readDocument(path) : part;
          return;
        }
      } else {
        part = {
          text: new TextDecoder('utf-8').decode(piece),
          notes: isUtf8(piece) ? [] : ['invalid UTF-8 replaced'],
        };
      }
      filled = buf.copy(spare, 0, cut, filled);
      [buf, spare] = [spare, buf];
      yield part;
      if (done && filled === 0) return;
    }
  } finally {
    await handle.close();
  }
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
