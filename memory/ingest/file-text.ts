/**
 * A file's text measured without being kept, and read again when it is needed. Measuring reads the file
 * once, checks it the way `readDocument` does (binary sniffing, UTF-16 with a BOM, `.gz`, invalid UTF-8,
 * big files in parts: files.ts, file-parts.ts) and keeps only what the text is: its byte range, its length
 * in UTF-16 units and how its bytes become it. For the usual file, valid UTF-8, that costs a validation
 * (simdutf) and a count, no decoding; the text itself exists once, where it is used (a run's isolate
 * process), and is read from the file again, which the page cache makes cheap, after a check that the
 * file is still the one measured (device, inode, size, modification and change times).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, type Stats } from 'node:fs';
import { extname } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { RlmError } from '../../core/errors.ts';
import { charBoundary, cutPoint, PART_BYTES } from './file-parts.ts';
import {
  BINARY_EXTENSIONS,
  BINARY_NOTE,
  binaryReason,
  errorText,
  readDocument,
  specialKind,
  utf16Encoding,
} from './read-document.ts';

/** What tells a file apart from the same path changed or replaced. */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * How a text comes from its file: `utf8`, the bytes of its range are its UTF-8; `replace`, they are
 * decoded with invalid sequences replaced by U+FFFD; `whole`, the whole file is decoded by `readDocument`
 * (UTF-16 with a BOM, `.gz`).
 */
export type TextMode = 'utf8' | 'replace' | 'whole';

/** A text of a file, measured: a whole file, or one part of a file too big to be one string. */
export interface FileText {
  /** Absolute path of the file. */
  path: string;
  identity: FileIdentity;
  /** Byte range of the file the text comes from (past a UTF-8 BOM). */
  start: number;
  end: number;
  mode: TextMode;
  /** Length in UTF-16 code units: what `.length` and every offset count. */
  chars: number;
  /** How the text's bytes travel ({@link readText}): UTF-8, or UTF-16LE for text with lone surrogates. */
  encoding: 'utf8' | 'utf16le';
  /** Its size in that encoding. */
  bytes: number;
  /**
   * A digest of the text's first bytes (of a `utf8` text; other texts share one): two texts with different
   * ones differ, so only texts that agree on it need hashing whole to be compared.
   */
  first: string;
}

/** What measuring a file gave: its texts (one, or parts), or why it is not read. */
export type Measured = { texts: FileText[] } | { skipped: true; note: string };

/** Bytes read at a time; also the size of the parts a big file is cut into (file-parts.ts). */
const CHUNK = PART_BYTES;
const BOM = [0xef, 0xbb, 0xbf] as const;
/** Bytes of a text {@link FileText.first} digests. */
const FIRST_BYTES = 4096;
/** {@link FileText.first} of texts that are not their bytes as they are. */
const DECODED = 'decoded';

const firstOf = (bytes: Uint8Array): string =>
  createHash('sha1').update(bytes.subarray(0, FIRST_BYTES)).digest('base64');

/**
 * Buffers a caller measuring many files lends each measure, so a folder of small files allocates no
 * buffers per file: grown to the largest size needed (at most {@link CHUNK}) and kept.
 */
export class MeasureBuffers {
  #pair: [Buffer, Buffer] = [Buffer.alloc(0), Buffer.alloc(0)];

  /** Two buffers of at least `size` bytes. */
  get(size: number): [Buffer, Buffer] {
    if (this.#pair[0].length < size) this.#pair = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
    return this.#pair;
  }
}

/** The identity of a file, from its stat. */
export function identityOf(st: Stats): FileIdentity {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

/** Whether two identities are the same file, unchanged. */
export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs
  );
}

/** UTF-16 units of valid UTF-8: a unit per character, two for those past U+FFFF (4-byte sequences). */
function utf16Length(bytes: Uint8Array): number {
  if (isAscii(bytes)) return bytes.length;
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b & 0xc0) !== 0x80) n += b >= 0xf0 ? 2 : 1;
  }
  return n;
}

const hasBom = (bytes: Uint8Array): boolean =>
  bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2];

const changed = (path: string): RlmError =>
  new RlmError(
    'BAD_INPUT',
    `${path} changed on disk after the run read it; run again to read it as it is now`,
    {
      path,
    },
  );

/**
 * Measures the file at `path`. A file longer than `maxChars` bytes is cut into parts as a store's ingest
 * cuts it (file-parts.ts), so its part texts are the store's documents.
 *
 * The file is read with synchronous calls, a chunk at a time with a turn of the event loop between
 * chunks: reading what the page cache holds takes the kernel microseconds, while each asynchronous call
 * is a trip through libuv's thread pool, which on a busy machine cost more than the reads (a folder of
 * 400 files: five calls each).
 */
export async function measureFile(
  path: string,
  maxChars: number,
  buffers: MeasureBuffers = new MeasureBuffers(),
): Promise<Measured> {
  const ext = extname(path).slice(1).toLowerCase();
  if (BINARY_EXTENSIONS.has(ext)) return { skipped: true, note: `${BINARY_NOTE} (.${ext}) skipped` };
  let fd: number;
  try {
    // Non-blocking: a FIFO swapped in after the scan is never waited on.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const gone = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      skipped: true,
      note: gone ? 'vanished before it was read' : `unreadable (${errorText(err)}), skipped`,
    };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { skipped: true, note: `${specialKind(st)} skipped (not a regular file)` };
    let identity = identityOf(st);
    if (ext === 'gz') return await measureDecoded(path, identity);
    // A file written while it was measured is measured again as it is now, once.
    for (let attempt = 0; ; attempt++) {
      const measured = await measureBytes(fd, path, identity, identity.size > maxChars, buffers);
      const after = identityOf(fstatSync(fd));
      if (!('texts' in measured) || sameFile(after, identity)) return measured;
      if (attempt === 1) return { skipped: true, note: 'changed while it was read, skipped' };
      identity = after;
    }
  } catch (err) {
    return { skipped: true, note: `unreadable (${errorText(err)}), skipped` };
  } finally {
    closeSync(fd);
  }
}

/** A file `readDocument` decodes whole (UTF-16, `.gz`): decoded once to be measured, then dropped. */
async function measureDecoded(path: string, identity: FileIdentity): Promise<Measured> {
  const doc = await readDocument(path);
  if (!('text' in doc)) return { skipped: true, note: doc.note };
  const { text } = doc;
  const wellFormed = text.isWellFormed();
  const texts: FileText[] = [
    {
      path,
      identity,
      start: 0,
      end: identity.size,
      mode: 'whole',
      chars: text.length,
      encoding: wellFormed ? 'utf8' : 'utf16le',
      bytes: wellFormed ? Buffer.byteLength(text, 'utf8') : text.length * 2,
      first: DECODED,
    },
  ];
  return { texts };
}

/** The text of `bytes` with invalid UTF-8 replaced (a part, or a range read whole). */
function replaced(bytes: Uint8Array): { chars: number; bytes: number } {
  const text = new TextDecoder('utf-8').decode(bytes);
  return { chars: text.length, bytes: Buffer.byteLength(text, 'utf8') };
}

/**
 * Measures a file's `identity.size` bytes as one text, or as parts (`inParts`), reading them a chunk at a
 * time (a file that grows or shrinks meanwhile shows a new identity, and is measured again).
 */
async function measureBytes(
  fd: number,
  path: string,
  identity: FileIdentity,
  inParts: boolean,
  buffers: MeasureBuffers,
): Promise<Measured> {
  const { size: total } = identity;
  // Parts are cut in part-sized buffers, as file-parts.ts cuts them; a small file is read in one go.
  const size = inParts ? CHUNK : Math.min(CHUNK, total);
  let [buf, spare] = buffers.get(size);
  let filled = 0;
  /** File offset of `buf[0]`. */
  let offset = 0;
  let sniffed = false;
  /** {@link FileText.first} of the whole file as one text. */
  let first = DECODED;
  const texts: FileText[] = [];
  // The whole file as one text: where it starts (past a BOM), whether it is still valid UTF-8, its length.
  let start = 0;
  let valid = true;
  let chars = 0;
  for (;;) {
    const want = Math.min(size - filled, total - offset - filled);
    // Between chunks of a big file, whatever else the process does gets its turn.
    if (offset > 0) await yieldToLoop();
    const bytesRead = want > 0 ? readSync(fd, buf, filled, want, offset + filled) : 0;
    filled += bytesRead;
    const done = bytesRead === 0 || offset + filled >= total;
    if (filled < size && !done) continue;
    const bytes = buf.subarray(0, filled);
    if (!sniffed) {
      sniffed = true;
      if (utf16Encoding(bytes) !== null) return measureDecoded(path, identity);
      const reason = binaryReason(bytes);
      if (reason !== null) return { skipped: true, note: `${BINARY_NOTE} skipped (${reason})` };
      start = hasBom(bytes) ? 3 : 0;
    }
    const from = offset === 0 ? start : 0;
    if (offset === 0) first = firstOf(buf.subarray(from, filled));
    let cut: number;
    if (inParts) {
      cut = done ? filled : cutPoint(buf, CHUNK);
      const piece = buf.subarray(from, cut);
      const part = isUtf8(piece)
        ? { mode: 'utf8' as const, chars: utf16Length(piece), bytes: piece.length, first: firstOf(piece) }
        : { mode: 'replace' as const, ...replaced(piece), first: DECODED };
      texts.push({ path, identity, start: offset + from, end: offset + cut, encoding: 'utf8', ...part });
    } else {
      cut = done ? filled : charBoundary(bytes, filled);
      const piece = buf.subarray(from, cut);
      if (valid && isUtf8(piece)) chars += utf16Length(piece);
      else valid = false;
    }
    offset += cut;
    filled = buf.copy(spare, 0, cut, filled);
    [buf, spare] = [spare, buf];
    if (done && filled === 0) break;
  }
  if (inParts) return { texts };
  if (valid)
    return {
      texts: [
        {
          path,
          identity,
          start,
          end: offset,
          mode: 'utf8',
          chars,
          encoding: 'utf8',
          bytes: offset - start,
          first,
        },
      ],
    };
  // Invalid UTF-8 somewhere: the text is what the replacing decoder makes of the whole file.
  const whole = replaced(readFileSync(fd));
  return {
    texts: [
      { path, identity, start: 0, end: offset, mode: 'replace', encoding: 'utf8', ...whole, first: DECODED },
    ],
  };
}

/** The first characters of `t` (at most `maxChars`), read from its file. */
export async function headOf(t: FileText, maxChars: number): Promise<string> {
  if (t.mode === 'whole') return (await textOf(t)).slice(0, maxChars);
  const fd = openSame(t);
  try {
    // Four bytes per character at most: enough bytes for `maxChars` however wide they are.
    const buf = Buffer.allocUnsafe(Math.min(t.end - t.start, maxChars * 4));
    const bytesRead = readSync(fd, buf, 0, buf.length, t.start);
    return new TextDecoder('utf-8').decode(buf.subarray(0, charBoundary(buf, bytesRead))).slice(0, maxChars);
  } finally {
    closeSync(fd);
  }
}

/** Opens `t`'s file and checks it is the one measured (synchronous, as measuring is: see measureFile). */
function openSame(t: FileText): number {
  let fd: number;
  try {
    fd = openSync(t.path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    throw changed(t.path);
  }
  if (!sameFile(identityOf(fstatSync(fd)), t.identity)) {
    closeSync(fd);
    throw changed(t.path);
  }
  return fd;
}

/** Reads `t`'s byte range whole, a chunk at a time with a turn of the event loop between chunks. */
async function rangeBytes(t: FileText): Promise<Buffer> {
  const fd = openSame(t);
  try {
    const out = Buffer.allocUnsafe(t.end - t.start);
    for (let at = 0; at < out.length; ) {
      if (at > 0) await yieldToLoop();
      const bytesRead = readSync(fd, out, at, Math.min(CHUNK, out.length - at), t.start + at);
      if (bytesRead === 0) throw changed(t.path);
      at += bytesRead;
    }
    if (!sameFile(identityOf(fstatSync(fd)), t.identity)) throw changed(t.path);
    return out;
  } finally {
    closeSync(fd);
  }
}

/** `t`'s text as a string. Throws BAD_INPUT when its file is no longer the one measured. */
export async function textOf(t: FileText): Promise<string> {
  if (t.mode === 'whole') {
    closeSync(openSame(t));
    const doc = await readDocument(t.path);
    if (!('text' in doc) || doc.text.length !== t.chars) throw changed(t.path);
    return doc.text;
  }
  const bytes = await rangeBytes(t);
  return t.mode === 'utf8' ? bytes.toString('utf8') : new TextDecoder('utf-8').decode(bytes);
}

/** Characters of a decoded text encoded per piece by {@link readText}. */
const ENCODE_CHARS = 1 << 20;

/**
 * `t`'s text in its `encoding`, `t.bytes` bytes in pieces. A piece may be a buffer the next piece reuses
 * (`scratch`, when given): use it before asking for the next. Throws BAD_INPUT when the file is no longer
 * the one measured.
 */
export async function* readText(t: FileText, scratch?: Buffer): AsyncGenerator<Uint8Array> {
  if (t.mode !== 'utf8') {
    // Rare texts (invalid UTF-8, UTF-16, .gz): decoded whole, then encoded a piece at a time.
    const text = await textOf(t);
    for (let at = 0; at < text.length; ) {
      let end = Math.min(at + ENCODE_CHARS, text.length);
      const last = text.charCodeAt(end - 1);
      if (t.encoding === 'utf8' && end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      yield Buffer.from(text.slice(at, end), t.encoding);
      at = end;
    }
    return;
  }
  const fd = openSame(t);
  try {
    const buf = scratch ?? Buffer.allocUnsafe(Math.min(CHUNK, Math.max(t.end - t.start, 1)));
    for (let at = t.start; at < t.end; ) {
      const bytesRead = readSync(fd, buf, 0, Math.min(buf.length, t.end - at), at);
      if (bytesRead === 0) throw changed(t.path);
      at += bytesRead;
      yield buf.subarray(0, bytesRead);
    }
    // Written to while it was read: what went out is not the text measured.
    if (!sameFile(identityOf(fstatSync(fd)), t.identity)) throw changed(t.path);
  } finally {
    closeSync(fd);
  }
}

/** A key that is the same for two texts only when they are the same range of the same unchanged file. */
export function textKey(t: FileText): string {
  const i = t.identity;
  return `${i.dev}:${i.ino}:${i.size}:${i.mtimeMs}:${i.ctimeMs}:${t.start}-${t.end}:${t.mode}`;
}
