/**
 * Reading one file as text: binary detection, `.gz` inflation, UTF-8 repair, BOM handling and UTF-16,
 * and the notes that say why a file was not read. Finding the files is ./files.ts.
 */

import { isUtf8 } from 'node:buffer';
import { constants, promises as fs, type Stats } from 'node:fs';
import { extname } from 'node:path';

/** A document read as text, or the reason it was not. */
export type ReadResult =
  | { text: string; notes: string[] }
  | { binary: true; note: string }
  | { unreadable: true; note: string };

/** How every binary-file note starts, so reports can count them. */
export const BINARY_NOTE = 'binary file';

/** Extensions that are never text, skipped without reading. */
export const BINARY_EXTENSIONS = new Set(
  (
    'png jpg jpeg gif webp bmp ico tif tiff psd heic avif svgz ' +
    'pdf doc docx xls xlsx ppt pptx odt ods odp epub ' +
    'zip tgz bz2 xz zst 7z rar tar jar war ear lz4 ' +
    'exe dll so dylib o a lib obj class pyc pyo wasm bin dat node ' +
    'mp3 mp4 m4a mov avi mkv webm wav flac ogg opus ' +
    'woff woff2 ttf otf eot ' +
    'sqlite sqlite3 db parquet arrow feather npy npz pkl pt onnx safetensors gguf'
  ).split(' '),
);

/** Bytes inspected to decide whether a file is binary. */
const SNIFF_BYTES = 8192;

/** Largest text a `.gz` file may inflate to; beyond it the file is skipped (a zip bomb, or not text). */
const MAX_GUNZIP_BYTES = 512 * 1024 * 1024;

/** What kind of non-regular file `st` describes, for notes. */
export function specialKind(st: Stats): string {
  if (st.isFIFO()) return 'FIFO (named pipe)';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
  return 'special file';
}

/** An error's code (EACCES…) or message, for notes. */
export function errorText(err: unknown): string {
  return err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : String(err);
}

/**
 * Reads a file as text. Binary files (known extension, NUL bytes or many control characters in the
 * first 8 KB) come back as `{ binary: true, note }`; files that cannot be read (permissions) or are
 * not regular files (a FIFO swapped in after the scan: opened non-blocking, so never waited on) as
 * `{ unreadable: true, note }`. `.gz` files are inflated first. Invalid UTF-8 is replaced by U+FFFD
 * and noted; a UTF-8 BOM is dropped; UTF-16 with a BOM is decoded.
 */
export async function readDocument(path: string): Promise<ReadResult> {
  const ext = extname(path).slice(1).toLowerCase();
  if (BINARY_EXTENSIONS.has(ext)) return { binary: true, note: `${BINARY_NOTE} (.${ext}) skipped` };
  const opened = await openDocument(path);
  if ('note' in opened) return opened;
  let bytes: Buffer;
  try {
    bytes = await opened.handle.readFile();
  } catch (err) {
    return unreadable(err);
  } finally {
    await opened.handle.close();
  }
  if (ext === 'gz') {
    const inflated = gunzipText(bytes);
    if ('note' in inflated) return { binary: true, note: inflated.note };
    bytes = inflated.bytes;
  }
  return decodeDocument(bytes);
}

/** Why a file could not be opened or read, as the result of reading it. */
export function unreadable(err: unknown): { unreadable: true; note: string } {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT')
    return { unreadable: true, note: 'vanished before it was read' };
  return { unreadable: true, note: `unreadable (${errorText(err)}), skipped` };
}

/**
 * A regular file opened for reading, with its stats, or why it is not read (gone, unreadable, not a
 * regular file). Opened non-blocking, so a FIFO swapped in after the scan is never waited on.
 */
export async function openDocument(
  path: string,
): Promise<{ handle: fs.FileHandle; st: Stats } | { unreadable: true; note: string }> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return unreadable(err);
  }
  let st: Stats;
  try {
    st = await handle.stat();
  } catch (err) {
    await handle.close();
    return unreadable(err);
  }
  if (st.isFile()) return { handle, st };
  await handle.close();
  return { unreadable: true, note: `${specialKind(st)} skipped (not a regular file)` };
}

/** The text of a gzip file, or why it is not read: corrupt, or inflating past the size cap. */
function gunzipText(bytes: Buffer): { bytes: Buffer } | { note: string } {
  try {
    // zlib loads here, on the first .gz file: every command that opens a store imports this module.
    const { gunzipSync } = process.getBuiltinModule('node:zlib');
    return { bytes: gunzipSync(bytes, { maxOutputLength: MAX_GUNZIP_BYTES }) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE')
      return { note: `${BINARY_NOTE} skipped (.gz inflates past ${MAX_GUNZIP_BYTES >> 20} MiB)` };
    return { note: `${BINARY_NOTE} skipped (.gz does not inflate: ${errorText(err)})` };
  }
}

/** The decoding half of {@link readDocument}, for bytes already in memory. */
export function decodeDocument(bytes: Uint8Array): ReadResult {
  const utf16 = utf16Encoding(bytes);
  if (utf16 !== null) {
    const text = new TextDecoder(utf16, { ignoreBOM: false }).decode(bytes);
    return { text, notes: [`decoded as ${utf16.toUpperCase()}`] };
  }
  const reason = binaryReason(bytes);
  if (reason !== null) return { binary: true, note: `${BINARY_NOTE} skipped (${reason})` };
  const notes: string[] = [];
  // TextDecoder drops a leading BOM by default, which is what we want.
  const text = new TextDecoder('utf-8').decode(bytes);
  if (!isUtf8(bytes)) {
    const replaced = countChar(text, 0xfffd) - countSequence(bytes, REPLACEMENT_UTF8);
    notes.push(`invalid UTF-8 replaced at ${replaced} place${replaced === 1 ? '' : 's'}`);
  }
  return { text, notes };
}

const REPLACEMENT_UTF8 = Buffer.from([0xef, 0xbf, 0xbd]);

export function utf16Encoding(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  if (bytes.length < 2) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/** Why the first bytes look binary, or null when they look like text. */
export function binaryReason(bytes: Uint8Array): string | null {
  const n = Math.min(bytes.length, SNIFF_BYTES);
  let control = 0;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === 0) return 'NUL bytes';
    // Tab, LF, VT, FF, CR and ESC (ANSI colours in logs) are normal in text.
    if (b < 0x20 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) control++;
  }
  return n > 0 && control / n > 0.1 ? 'control characters' : null;
}

function countChar(text: string, code: number): number {
  const ch = String.fromCharCode(code);
  let count = 0;
  for (let i = text.indexOf(ch); i !== -1; i = text.indexOf(ch, i + 1)) count++;
  return count;
}

function countSequence(bytes: Uint8Array, seq: Buffer): number {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (let i = buf.indexOf(seq); i !== -1; i = buf.indexOf(seq, i + seq.length)) count++;
  return count;
}
