import { appendFileSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { cutPoint, PART_BYTES, readDocumentParts } from '../../../memory/ingest/file-parts.ts';
import { tempDir } from '../../helpers/temp.ts';

const line = (i: number) => `line ${i} of the big log, with café and 日本 in it\n`;

describe('files larger than a part', () => {
  it('are read as parts cut after line ends, with multi-byte characters intact', async () => {
    const file = path.join(tempDir(), 'big.log');
    const text = Array.from({ length: 3000 }, (_, i) => line(i)).join('');
    writeFileSync(file, text);
    const parts: string[] = [];
    for await (const p of readDocumentParts(file, Buffer.byteLength(text), 40_000)) {
      expect('text' in p).toBe(true);
      if ('text' in p) parts.push(p.text);
    }
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.join('')).toBe(text);
    for (const p of parts.slice(0, -1)) expect(p.endsWith('\n')).toBe(true);
  });

  it('are cut by default in parts of at most 2 MiB, half a segment of text', async () => {
    expect(PART_BYTES).toBe(2 * 1024 * 1024);
    const file = path.join(tempDir(), 'five.log');
    const text = Array.from({ length: 110_000 }, (_, i) => line(i)).join('');
    writeFileSync(file, text);
    const size = Buffer.byteLength(text);
    expect(size).toBeGreaterThan(2 * PART_BYTES);
    const parts: string[] = [];
    for await (const p of readDocumentParts(file, size)) if ('text' in p) parts.push(p.text);
    expect(parts).toHaveLength(Math.ceil(size / PART_BYTES));
    for (const p of parts) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(PART_BYTES);
    expect(parts.join('')).toBe(text);
  });

  it('without line ends, are cut between characters, never inside one', async () => {
    const file = path.join(tempDir(), 'one-line.txt');
    // 12 bytes a repeat (2 + 3 + 3 + 4): a cut at a multiple of 40,000 falls inside a character.
    const text = 'é日本🎉'.repeat(12_000);
    writeFileSync(file, text);
    const parts: string[] = [];
    for await (const p of readDocumentParts(file, Buffer.byteLength(text), 40_000)) {
      if (!('text' in p)) throw new Error(p.note);
      expect(p.notes).toEqual([]);
      parts.push(p.text);
    }
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.join('')).toBe(text);
  });

  it('cutPoint: after the last line end in the second half, else before a character cut short', () => {
    const bytes = Buffer.from('abcdefgé-tail');
    expect(cutPoint(bytes, 8)).toBe(7);
    expect(cutPoint(bytes, 9)).toBe(9);
    expect(cutPoint(Buffer.from('abc\ndefghijk'), 10)).toBe(10);
    expect(cutPoint(Buffer.from('abcdefg\nhij'), 10)).toBe(8);
    // Not UTF-8 (continuation bytes only): cut where asked.
    expect(cutPoint(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80]), 5)).toBe(5);
  });

  it('are stored as parts with the file path; re-ingest skips, shrinking drops stale parts, rm by path removes all', async () => {
    const root = tempDir();
    const file = path.join(root, 'big.log');
    writeFileSync(file, Array.from({ length: 3000 }, (_, i) => line(i)).join(''));
    const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
    const opts = { partBytes: 40_000, segmentChars: 60_000 };
    const first = await store.ingestPaths([file], opts);
    const docs = store.documents();
    expect(docs.length).toBeGreaterThan(3);
    expect(first.added).toBe(docs.length);
    expect(new Set(docs.map((d) => d.path))).toEqual(new Set([file]));
    expect(docs.map((d) => d.id).sort()[0]).toMatch(/^big-log-[0-9a-f]{8}$/);
    const [hit] = await store.search('line 2999');
    expect(hit?.path).toBe(file);
    expect((await store.grep('line 2999 ', { literal: true })).matches).toHaveLength(1);

    expect(await store.ingestPaths([file], opts)).toMatchObject({
      added: 0,
      updated: 0,
      skipped: docs.length,
    });

    writeFileSync(file, Array.from({ length: 500 }, (_, i) => line(i)).join(''));
    await store.ingestPaths([file], opts);
    expect(store.documents().length).toBeLessThan(docs.length);
    expect((await store.grep('line 2999 ', { literal: true })).matches).toHaveLength(0);
    expect((await store.grep('line 499 ', { literal: true })).matches).toHaveLength(1);

    expect(await store.removeDocument(file)).toBe(true);
    expect(store.documents()).toEqual([]);
    await store.close();
  });
});

describe('a file that changes size while it is ingested', () => {
  const log = (n: number) => Array.from({ length: n }, (_, i) => line(i)).join('');
  const more = (n: number) => Array.from({ length: n }, (_, i) => `appended ${i}\n`).join('');

  it('is read up to its size at the scan, however fast it grows, then noted', async () => {
    const file = path.join(tempDir(), 'app.log');
    const text = log(3000);
    writeFileSync(file, text);
    const size = Buffer.byteLength(text);
    const parts: string[] = [];
    const notes: string[] = [];
    for await (const p of readDocumentParts(file, size, 40_000)) {
      if ('changed' in p) notes.push(p.note);
      else if ('text' in p) parts.push(p.text);
      // A writer that outpaces the reader: two parts' worth more for every part read.
      appendFileSync(file, more(8000));
      if (parts.length > 50) throw new Error('read on past the size at the scan');
    }
    expect(parts.join('')).toBe(text);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      new RegExp(`^grew since it was scanned \\(${size} bytes then, \\d+ now\\): ingested as of the scan$`),
    );
  });

  it('in a store: ingested as of the scan with a note when it grew, as far as it went when cut short', async () => {
    const root = tempDir();
    const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
    try {
      // Parts of 40,000 bytes, committed two at a time: the file changes once its first batch is written.
      const change = (how: () => void) => ({
        partBytes: 40_000,
        segmentChars: 60_000,
        onProgress: (p: { phase: string }) => {
          if (p.phase === 'commit') how();
        },
      });
      const grown = path.join(root, 'grown.log');
      const text = log(3000);
      writeFileSync(grown, text);
      // More than the file held, three times over: read on, the ingest would take all of it.
      let appends = 0;
      const grow = () => {
        if (appends++ < 3) appendFileSync(grown, more(20_000));
      };
      let report = await store.ingestPaths([grown], change(grow));
      expect((await store.readDocument(grown))?.text).toBe(text);
      expect(report.notes).toEqual([
        {
          path: grown,
          note: expect.stringMatching(/^grew since it was scanned .*: ingested as of the scan$/),
        },
      ]);

      const cut = path.join(root, 'cut.log');
      writeFileSync(cut, text);
      let once = true;
      const shrink = () => {
        if (once) truncateSync(cut, 10_000);
        once = false;
      };
      report = await store.ingestPaths([cut], change(shrink));
      const kept = (await store.readDocument(cut))!.text;
      expect(text.startsWith(kept)).toBe(true);
      expect(kept.length).toBeLessThan(text.length);
      const read = Buffer.byteLength(kept);
      expect(report.notes).toEqual([
        {
          path: cut,
          note: `shrank since it was scanned (${Buffer.byteLength(text)} bytes then, 10000 now): only the ${read} bytes read before its end are ingested`,
        },
      ]);
    } finally {
      await store.close();
    }
  });

  it('read whole, is read as of the scan too, and noted when it changed before it was read', async () => {
    const root = tempDir();
    const store = await ChunkStore.open(path.join(root, 'store'), { create: true });
    try {
      const file = path.join(root, 'small.log');
      const text = log(20);
      const size = Buffer.byteLength(text);
      writeFileSync(file, text);
      // The file changes after the scan, before it is opened.
      const onRead = (how: () => void) => ({
        onProgress: (p: { phase: string }) => {
          if (p.phase === 'read') how();
        },
      });
      let report = await store.ingestPaths(
        [file],
        onRead(() => appendFileSync(file, more(10))),
      );
      expect((await store.readDocument(file))?.text).toBe(text);
      expect(report.notes.map((n) => n.note)).toEqual([
        `grew since it was scanned (${size} bytes then, ${size + Buffer.byteLength(more(10))} now): ingested as of the scan`,
      ]);

      writeFileSync(file, text);
      const head = line(0) + line(1);
      const headBytes = Buffer.byteLength(head);
      report = await store.ingestPaths(
        [file],
        onRead(() => truncateSync(file, headBytes)),
      );
      expect((await store.readDocument(file))?.text).toBe(head);
      expect(report.notes.map((n) => n.note)).toEqual([
        `shrank since it was scanned (${size} bytes then, ${headBytes} now): only the ${headBytes} bytes read before its end are ingested`,
      ]);
    } finally {
      await store.close();
    }
  });
});
