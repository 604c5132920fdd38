import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { readDocumentParts } from '../../../memory/ingest/file-parts.ts';
import { type FileText, headOf, measureFile, readText, textOf } from '../../../memory/ingest/file-text.ts';
import { contentHash } from '../../../memory/ingest/files.ts';
import { readDocument } from '../../../memory/ingest/read-document.ts';
import { tempDir } from '../../helpers/temp.ts';

const MAX = 1 << 30;

function file(name: string, content: string | Uint8Array): string {
  const p = path.join(tempDir(), name);
  writeFileSync(p, content);
  return p;
}

/** The one text of a measured file. */
async function measured(p: string, max = MAX): Promise<FileText[]> {
  const m = await measureFile(p, max);
  if (!('texts' in m)) throw new Error(`skipped: ${m.note}`);
  return m.texts;
}

/** What `readText` gives, put back together and decoded. */
async function readBack(t: FileText): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of readText(t, Buffer.alloc(7))) pieces.push(Buffer.from(piece));
  const bytes = Buffer.concat(pieces);
  expect(bytes.length).toBe(t.bytes);
  return bytes.toString(t.encoding);
}

describe('measuring a file without keeping its text', () => {
  it('gives the text a store ingest reads: its length in UTF-16 units, the bytes it travels in, the text again', async () => {
    const cases: [string, string | Uint8Array][] = [
      ['ascii.log', 'plain ASCII\nlines\n'],
      ['bom.txt', '\ufeffé𝄞 naïve\r\nline two ✓\n'],
      ['empty.txt', ''],
      ['invalid.txt', Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x0a, 0xe2, 0x82])],
      ['utf16.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi é \ud800!', 'utf16le')])],
      ['notes.md.gz', gzipSync('# Title\n\nzipped text ✓\n')],
    ];
    for (const [name, content] of cases) {
      const p = file(name, content);
      const doc = await readDocument(p);
      if (!('text' in doc)) throw new Error(name);
      const [t, ...rest] = await measured(p);
      expect(rest, name).toEqual([]);
      expect(t!.chars, name).toBe(doc.text.length);
      expect(await textOf(t!), name).toBe(doc.text);
      expect(await readBack(t!), name).toBe(doc.text);
      expect(await headOf(t!, 3), name).toBe(doc.text.slice(0, 3));
    }
    // Decoding UTF-16 replaces a lone surrogate, so what is read travels as UTF-8 like the rest.
    const [lone] = await measured(
      file('lone.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\ud800', 'utf16le')])),
    );
    expect(lone).toMatchObject({ mode: 'whole', encoding: 'utf8', chars: 2, bytes: 4 });
    const [plain] = await measured(file('plain.txt', 'abc'));
    expect(plain).toMatchObject({ mode: 'utf8', encoding: 'utf8', bytes: 3, start: 0, end: 3 });
  });

  it('counts characters that straddle the chunks it reads in', async () => {
    // A 4-byte character across the 4 MiB read boundary, then two-byte ones.
    const text = `${'a'.repeat((4 << 20) - 2)}😀${'é'.repeat(10)}\n`;
    const [t] = await measured(file('edge.txt', text));
    expect(t).toMatchObject({ mode: 'utf8', chars: text.length, bytes: Buffer.byteLength(text) });
    expect(await textOf(t!)).toBe(text);
  });

  it('cuts a file longer than a string can be into the parts a store ingest makes', async () => {
    const line = (i: number) => `line ${i} of the big log, with café and 日本 in it\n`;
    const text = Array.from({ length: 200_000 }, (_, i) => line(i)).join('');
    const p = file('big.log', text);
    const parts = await measured(p, 1 << 20);
    const expected: string[] = [];
    for await (const part of readDocumentParts(p, Buffer.byteLength(text)))
      if ('text' in part) expected.push(part.text);
    expect(parts.length).toBe(expected.length);
    expect(parts.length).toBeGreaterThan(1);
    expect(await Promise.all(parts.map((t) => textOf(t)))).toEqual(expected);
    expect(parts.map((t) => t.chars)).toEqual(expected.map((x) => x.length));
  });

  it('skips binary files and says why, as reading them would', async () => {
    for (const [name, content] of [
      ['logo.png', 'not really a png'],
      ['nul.txt', Buffer.from([0x61, 0x00, 0x62])],
    ] as const) {
      const p = file(name, content);
      const doc = await readDocument(p);
      const m = await measureFile(p, MAX);
      expect(m).toEqual({ skipped: true, note: 'note' in doc ? doc.note : '' });
    }
    expect(await measureFile(path.join(tempDir(), 'gone.txt'), MAX)).toEqual({
      skipped: true,
      note: 'vanished before it was read',
    });
  });

  it('gives the same first-bytes digest to texts that begin alike, and a hash of the same bytes as the text', async () => {
    const [a] = await measured(file('a.txt', 'same start\nthen a\n'));
    const [b] = await measured(file('b.txt', 'same start\nthen a\n'));
    const [c] = await measured(file('c.txt', 'other start\nthen c\n'));
    expect(a!.first).toBe(b!.first);
    expect(a!.first).not.toBe(c!.first);
    const pieces: Buffer[] = [];
    for await (const piece of readText(a!)) pieces.push(Buffer.from(piece));
    expect(createHash('sha256').update(Buffer.concat(pieces)).digest('hex')).toBe(
      contentHash('same start\nthen a\n'),
    );
  });

  it('refuses to read again a file changed since it was measured, even to the same size', async () => {
    const p = file('notes.txt', 'before the change\n');
    const [t] = await measured(p);
    writeFileSync(p, 'after  the change\n');
    const err = await textOf(t!).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toContain('changed on disk after the run read it');
    const pieces = (async () => {
      for await (const _ of readText(t!)) {
        // Never reached: the file is checked before anything is read.
      }
    })();
    await expect(pieces).rejects.toSatisfy((e: unknown) => isRlmError(e, 'BAD_INPUT'));
  });
});
