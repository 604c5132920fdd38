/**
 * The document pipe: how a context document's text goes from the host to an isolate process. The IPC
 * channel carries a `doc` message per document (id, byte count, encoding: protocol.ts); the text itself
 * goes as raw bytes on a pipe of its own, in the order the messages were sent. Node's IPC serializes every
 * message in both processes, which cost seconds per 100 MB; the pipe costs an encode, the kernel's copy
 * and a decode.
 *
 * Text without lone surrogates goes as UTF-8 (for the usual one-byte text, about one byte per
 * character); text with them as UTF-16LE, the only encoding that keeps them. A run's --context file goes
 * as its bytes read from the file again (host.ts `TextSource`): the host never holds its text. The receiver decodes piece by
 * piece and joins the pieces by concatenation, so it never holds the bytes and a decoded copy of a whole
 * document at once.
 */

import type { Writable } from 'node:stream';
import type { DocEncoding } from './protocol.ts';

/** Characters encoded per write: large enough that writes are few, small enough that the buffers are. */
const WRITE_CHARS = 1 << 20;

/**
 * The encoding a text of `chars` UTF-16 units goes in, given it is UTF-8 of `bytes` bytes: ASCII (a byte
 * per unit) goes as `latin1`, the same bytes. The receiver decodes latin1 into an external string, memory
 * Node allocates with malloc, where the UTF-8 decoder builds the string in V8's heap: on a machine where
 * touching fresh pages is slow (a VM), the external string costs half as much (about 0.3 against 0.6 s
 * of CPU for 100 MB), and its pages are huge pages in an isolate process (pool.ts).
 */
export function utf8Wire(bytes: number, chars: number): DocEncoding {
  return bytes === chars ? 'latin1' : 'utf8';
}

/** The encoding a text goes in, and its length in bytes there. */
export function docEncoding(text: string): { encoding: DocEncoding; bytes: number } {
  // One-byte strings answer isWellFormed at once; two-byte ones are scanned (fast, native).
  if (text.isWellFormed()) {
    const bytes = Buffer.byteLength(text, 'utf8');
    return { encoding: utf8Wire(bytes, text.length), bytes };
  }
  return { encoding: 'utf16le', bytes: text.length * 2 };
}

/**
 * Writes `text` on `out` in `encoding`, a piece at a time into two buffers used in turn: a buffer is
 * filled again once the pipe has taken what it held, which is also the wait while the pipe is full.
 * Resolves false when the pipe failed or closed first (the process ended).
 */
export async function writeDoc(out: Writable, text: string, encoding: DocEncoding): Promise<boolean> {
  // A UTF-16 unit takes at most 3 bytes in UTF-8 (a surrogate pair, two units, takes 4); a short text
  // (a folder's files) gets buffers of its own size.
  const size = Math.min(WRITE_CHARS, text.length) * 3;
  const buffers = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)] as const;
  const taken: (Promise<boolean> | null)[] = [null, null];
  for (let at = 0, k = 0; at < text.length; k ^= 1) {
    if (taken[k] !== null && !(await taken[k])) return false;
    let end = Math.min(at + WRITE_CHARS, text.length);
    // UTF-8 must not split a surrogate pair (the text is well-formed, so a high one has its low one next).
    const last = text.charCodeAt(end - 1);
    if (encoding !== 'utf16le' && end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    const buffer = buffers[k] as Buffer;
    const n = buffer.write(text.slice(at, end), 0, encoding);
    taken[k] = new Promise((resolve) => out.write(buffer.subarray(0, n), (err) => resolve(!err)));
    at = end;
  }
  const [a, b] = await Promise.all(taken);
  return a !== false && b !== false;
}

/** Zeros written in place of a source's missing bytes, a slice at a time. */
const PAD = Buffer.alloc(1 << 16);

/**
 * Writes a source's `bytes` bytes, given as `pieces`, on `out`, each piece once the pipe has taken the one
 * before (a piece's buffer may be reused for the next). When the source fails, or gives other than
 * `bytes` bytes, the rest is padded with zeros (or cut) so the documents after it stay in place, and the
 * result says so: `failed` (the receiver must drop the document), false when the pipe failed or closed.
 */
export async function writePieces(
  out: Writable,
  pieces: AsyncIterable<Uint8Array>,
  bytes: number,
): Promise<boolean | 'failed'> {
  const write = (chunk: Uint8Array) =>
    new Promise<boolean>((resolve) => out.write(chunk, (err) => resolve(!err)));
  let sent = 0;
  let failed = false;
  try {
    for await (const piece of pieces) {
      const take = Math.min(piece.length, bytes - sent);
      if (take < piece.length) failed = true;
      if (take > 0 && !(await write(piece.subarray(0, take)))) return false;
      sent += take;
      if (failed) break;
    }
  } catch {
    failed = true;
  }
  if (sent < bytes) failed = true;
  while (sent < bytes) {
    const n = Math.min(PAD.length, bytes - sent);
    if (!(await write(PAD.subarray(0, n)))) return false;
    sent += n;
  }
  return failed ? 'failed' : true;
}

interface Expected {
  id: string;
  encoding: DocEncoding;
  bytes: Buffer;
  filled: number;
}

/**
 * The receiving end. It is told which documents come (`expect`, in the order the host sent them) and
 * gives the pipe's reads a place (`target`, then `filled`): the rest of the first incomplete document's
 * buffer, so a read never crosses into the next document. Each whole text goes to `onDocument`.
 */
export class DocReader {
  readonly #queue: Expected[] = [];
  /** Bytes that came before their document's message (the two channels are not ordered together). */
  readonly #early: Buffer[] = [];
  readonly #scratch = Buffer.allocUnsafe(1 << 16);
  readonly #onDocument: (id: string, text: string) => void;

  constructor(onDocument: (id: string, text: string) => void) {
    this.#onDocument = onDocument;
  }

  /** A document of `bytes` bytes in `encoding` follows those expected before it. */
  expect(id: string, bytes: number, encoding: DocEncoding): void {
    this.#queue.push({ id, encoding, bytes: Buffer.allocUnsafe(bytes), filled: 0 });
    for (const chunk of this.#early.splice(0)) this.#take(chunk);
    this.#settle();
  }

  /** Where the next read goes. */
  target(): Buffer {
    const head = this.#queue[0];
    return head === undefined ? this.#scratch : head.bytes.subarray(head.filled);
  }

  /** The last read put `n` bytes into `into`, which {@link target} gave. */
  filled(n: number, into: Uint8Array): void {
    const head = this.#queue[0];
    const inPlace =
      head !== undefined &&
      into.buffer === head.bytes.buffer &&
      into.byteOffset === head.bytes.byteOffset + head.filled;
    if (inPlace) head.filled += n;
    // The read was given a place before its document was announced (the scratch buffer, read into
    // again): its bytes go where they belong now, or wait for their message.
    else this.#take(Buffer.from(into.subarray(0, n)));
    this.#settle();
  }

  /** Bytes not read in place: they go to the documents in order, or wait for their message. */
  #take(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      const head = this.#queue.find((d) => d.filled < d.bytes.length);
      if (head === undefined) {
        this.#early.push(chunk.subarray(at));
        return;
      }
      const n = chunk.copy(head.bytes, head.filled, at);
      head.filled += n;
      at += n;
    }
  }

  /** Hands over the documents at the head of the queue that are complete (empty ones at once). */
  #settle(): void {
    while (this.#queue.length > 0 && this.#queue[0]!.filled === this.#queue[0]!.bytes.length) {
      const done = this.#queue.shift()!;
      this.#onDocument(done.id, done.bytes.toString(done.encoding));
    }
  }
}
