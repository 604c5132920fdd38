import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DocReader, docEncoding, writeDoc, writePieces } from '../../../src/sandbox/process/doc-pipe.ts';
import type { DocEncoding } from '../../../src/sandbox/process/protocol.ts';

/** Writes `texts` as the host does and reads them back as an isolate process does, reads of `readSize`. */
async function roundTrip(
  texts: string[],
  readSize: number,
  announceLate = false,
): Promise<Map<string, string>> {
  const got = new Map<string, string>();
  const reader = new DocReader((id, text) => got.set(id, text));
  const pipe = new PassThrough();
  const chunks: Buffer[] = [];
  pipe.on('data', (c: Buffer) => chunks.push(c));
  const sent: { id: string; bytes: number; encoding: DocEncoding }[] = [];
  for (const [i, text] of texts.entries()) {
    const { encoding, bytes } = docEncoding(text);
    sent.push({ id: `d${i}`, bytes, encoding });
    if (!announceLate) reader.expect(`d${i}`, bytes, encoding);
    expect(await writeDoc(pipe, text, encoding)).toBe(true);
  }
  // A pipe's reads: each fills at most what the reader's target leaves, at most readSize.
  for (const chunk of chunks) {
    for (let at = 0; at < chunk.length; ) {
      const into = reader.target();
      const n = Math.min(into.length, readSize, chunk.length - at);
      chunk.copy(into, 0, at, at + n);
      reader.filled(n, into);
      at += n;
    }
  }
  if (announceLate) for (const s of sent) reader.expect(s.id, s.bytes, s.encoding);
  return got;
}

describe('the document pipe', () => {
  it('sends ASCII as latin1 (the same bytes), other well-formed text as UTF-8, text with lone surrogates as UTF-16LE', () => {
    expect(docEncoding('plain')).toEqual({ encoding: 'latin1', bytes: 5 });
    expect(docEncoding('é😀')).toEqual({ encoding: 'utf8', bytes: 6 });
    expect(docEncoding('a\uD800b')).toEqual({ encoding: 'utf16le', bytes: 6 });
  });

  it('gives back every document exactly, also empty ones and pairs across write pieces', async () => {
    // 2^20 characters per write: a pair lands on the edge at 2^20 - 1.
    const edge = `${'a'.repeat((1 << 20) - 1)}😀${'é'.repeat(1000)}`;
    const texts = ['', 'first', edge, 'lone \uDC00 low and high \uD800', ''];
    for (const readSize of [1000, 65536]) {
      const got = await roundTrip(texts, readSize);
      expect([...got.keys()]).toEqual(['d0', 'd1', 'd2', 'd3', 'd4']);
      expect([...got.values()]).toEqual(texts);
    }
    const small = ['é😀 x', '', '\uD800\uDC00\uDC00'];
    expect([...(await roundTrip(small, 1)).values()]).toEqual(small);
  });

  it('keeps bytes that come before their document is announced', async () => {
    const texts = ['one', 'two 😀', '\uD800'];
    const got = await roundTrip(texts, 3, true);
    expect([...got.values()]).toEqual(texts);
  });

  it('stops writing when the pipe is gone', async () => {
    const out = new Writable({
      write(_chunk, _enc, done) {
        done(new Error('EPIPE'));
      },
    });
    out.on('error', () => undefined);
    expect(await writeDoc(out, 'x'.repeat(3 << 20), 'utf8')).toBe(false);
  });
});

describe('a text read from a file as it is written', () => {
  async function written(pieces: () => AsyncIterable<Uint8Array>, bytes: number) {
    const pipe = new PassThrough();
    const chunks: Buffer[] = [];
    // Copied as it arrives, as the kernel copies what a socket writes before the write's callback.
    pipe.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    const result = await writePieces(pipe, pieces(), bytes);
    return { result, out: Buffer.concat(chunks) };
  }

  it('writes exactly its bytes, reusing none of a piece before the pipe has taken it', async () => {
    const scratch = Buffer.alloc(3);
    const source = async function* () {
      for (const part of ['abc', 'def', 'g']) {
        scratch.write(part);
        yield scratch.subarray(0, part.length);
      }
    };
    expect(await written(source, 7)).toEqual({ result: true, out: Buffer.from('abcdefg') });
  });

  it('keeps the documents after it in place when the source fails or says more or less than announced', async () => {
    const failing = async function* () {
      yield Buffer.from('ab');
      throw new Error('the file changed');
    };
    expect(await written(failing, 5)).toEqual({ result: 'failed', out: Buffer.from([0x61, 0x62, 0, 0, 0]) });
    const longer = async function* () {
      yield Buffer.from('abcdef');
    };
    expect(await written(longer, 4)).toEqual({ result: 'failed', out: Buffer.from('abcd') });
    const shorter = async function* () {
      yield Buffer.from('a');
    };
    expect(await written(shorter, 2)).toEqual({ result: 'failed', out: Buffer.from([0x61, 0]) });
  });
});
