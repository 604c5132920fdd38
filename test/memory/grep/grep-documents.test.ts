/**
 * grep reads a document as one text (issue 30): context across chunk edges, matches that cross an edge,
 * overlapping chunks read once, counts with no cap, the `document` filter by id or path, and a budget
 * that grows with the text scanned (issue 23).
 */
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { type GrepChunk, GrepRunner, grepTexts } from '../../../memory/grep/grep.ts';
import { assemble, ScanClock } from '../../../memory/grep/grep-scan.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import { caught } from '../../helpers/errors.ts';
import { tempDir } from '../../helpers/temp.ts';

const runners: GrepRunner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

function storeDir(): string {
  return path.join(tempDir(), 'store');
}

/** A changelog-like text: entries of about 350 characters, each ending in a signature line. */
function changelog(entries: number): string {
  const out: string[] = [];
  for (let i = 0; i < entries; i++) {
    out.push(
      `pkg (1.${i}) unstable; urgency=medium\n\n` +
        `  * Fix bug number ${1000 + i} in the parser, which broke on long lines.\n` +
        `  * Update the translations and the documentation for release 1.${i}.\n\n` +
        ` -- Maintainer ${i} <m${i}@example.org>  Mon, 0${(i % 9) + 1} Jan 2024 10:00:00 +0000\n\n`,
    );
  }
  return out.join('');
}

describe('a document is grepped as one text', () => {
  it('reaches across chunk edges for before/after, as far as asked, within the document', async () => {
    const text = changelog(40);
    // One chunk per line group: chunks of ~100-350 characters, as the changelog had.
    const lines = text.split(/(?<=\n)/);
    const chunks: GrepChunk[] = [];
    let at = 0;
    for (let i = 0; i < lines.length; i += 2) {
      const piece = lines.slice(i, i + 2).join('');
      chunks.push({
        id: `log:${chunks.length}`,
        text: piece,
        document: 'log',
        start: at,
        end: at + piece.length,
      });
      at += piece.length;
    }
    expect(chunks.length).toBeGreaterThan(50);
    for (const literal of [true, false]) {
      const r = await grepTexts(chunks, 'Fix bug number 1020', { context: 600, literal });
      const m = r.matches[0]!;
      expect(r.matches).toHaveLength(1);
      // The whole 600 characters either side: several chunks back and forth.
      expect(m.before).toHaveLength(600);
      expect(m.after).toHaveLength(600);
      const entryEnd = text.indexOf(' -- Maintainer 20 ', m.documentOffset);
      expect(m.after).toContain(' -- Maintainer 20 <m20@example.org>');
      expect(entryEnd).toBeGreaterThan(0);
      // Offsets: in the chunk it starts in, and in the document.
      const chunk = chunks.find((c) => c.id === m.id)!;
      expect(chunk.text.slice(m.offset, m.offset + 19)).toBe('Fix bug number 1020');
      expect(m.documentOffset).toBe(chunk.start! + m.offset);
      expect(text.slice(m.documentOffset, m.documentOffset! + 19)).toBe('Fix bug number 1020');
      expect(m.document).toBe('log');
    }
    // It never reaches into another document.
    const two = await grepTexts(
      [
        { id: 'a:0', text: 'first doc\n', document: 'a' },
        { id: 'b:0', text: 'needle here\n', document: 'b' },
        { id: 'b:1', text: 'rest of b\n', document: 'b' },
      ],
      'needle',
      { context: 100, literal: true },
    );
    expect(two.matches[0]).toMatchObject({ id: 'b:0', before: '', after: '\nrest of b\n' });
  });

  it('finds a match that crosses a chunk edge, and reports it in the chunk it starts in', async () => {
    const chunks: GrepChunk[] = [
      { id: 'd:0', text: 'the signature line is -- Main', document: 'd' },
      { id: 'd:1', text: 'tainer <x@y>\nnext line', document: 'd' },
    ];
    for (const literal of [true, false]) {
      const r = await grepTexts(chunks, '-- Maintainer <', { literal });
      expect(r.matches).toEqual([
        {
          id: 'd:0',
          offset: 22,
          text: 'the signature line is -- Maintainer <x@y>',
          before: '',
          after: '',
          document: 'd',
          documentOffset: 22,
        },
      ]);
    }
  });

  it('reads overlapping chunks once: no match is reported or counted twice', async () => {
    const store = new MemoryChunkStore();
    onTestFinished(() => store.close());
    const text = Array.from({ length: 1200 }, (_, i) => `line ${i} ERR-${String(i).padStart(4, '0')}`).join(
      '\n',
    );
    await store.ingestText('log', text, { chunker: 'size', chunkTokens: 400, overlapTokens: 100 });
    const chunks = store.documentChunks('log');
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks[1]!.start).toBeLessThan(chunks[0]!.end);
    const all = await store.grep('ERR-\\d{4}', { limit: 10_000 });
    expect(all.matches).toHaveLength(1200);
    expect(new Set(all.matches.map((m) => m.documentOffset)).size).toBe(1200);
    for (const m of all.matches.slice(0, 50)) {
      const c = store.getChunk(m.id)!;
      expect(c.text.slice(m.offset, m.offset + 4)).toBe('ERR-');
      expect(m.documentOffset).toBe(c.start + m.offset);
    }
    const counted = await store.grep('ERR-\\d{4}', { count: true });
    expect(counted.counts).toEqual({
      matches: 1200,
      lines: 1200,
      documents: [{ id: 'log', matches: 1200, lines: 1200 }],
    });
  });

  it('keeps rendered chunks (offsets that are not a slice of the text) on lines of their own', () => {
    const doc = assemble([
      { id: 't:0', text: 'User: hi\n\nAssistant: hello', document: 't', start: 0, end: 200 },
      { id: 't:1', text: 'User: again', document: 't', start: 200, end: 400 },
    ]);
    expect(doc.text).toBe('User: hi\n\nAssistant: hello\nUser: again');
  });
});

describe('count mode', () => {
  it('counts every occurrence and every matching line per document, with no cap', async () => {
    // More matches than the largest limit a listing allows (100,000).
    const big = 'ERR-1234 ok ERR-5678\n'.repeat(60_000);
    const corpus: GrepChunk[] = [
      { id: 'a:0', text: big, document: 'a' },
      { id: 'b:0', text: 'nothing\n', document: 'b' },
      { id: 'c:0', text: 'ERR-0001\nERR-0002 and ERR-0003', document: 'c' },
    ];
    const r = new GrepRunner(corpus);
    runners.push(r);
    for (const literal of [false, true]) {
      const pattern = literal ? 'ERR-' : 'ERR-\\d{4}';
      const res = await r.grep(pattern, { count: true, literal });
      expect(res.matches).toEqual([]);
      expect(res.truncated).toBe(false);
      expect(res.counts).toEqual({
        matches: 120_003,
        lines: 60_002,
        documents: [
          { id: 'a', matches: 120_000, lines: 60_000 },
          { id: 'c', matches: 3, lines: 2 },
        ],
      });
    }
    // With the document filter, and an empty match counted once per position.
    expect((await r.grep('ERR', { count: true, document: 'c' })).counts?.matches).toBe(3);
    expect((await r.grep('^', { count: true, document: ['b', 'c'] })).counts).toEqual({
      matches: 3,
      lines: 3,
      documents: [
        { id: 'b', matches: 1, lines: 1 },
        { id: 'c', matches: 2, lines: 2 },
      ],
    });
  });

  it('counts over a store in files, per document in path order', async () => {
    const store = await ChunkStore.open(storeDir(), { create: true });
    onTestFinished(() => store.close());
    await store.ingestText('b-doc', 'x ERR-1 y ERR-2\nERR-3\n', { path: '/p/b.log' });
    await store.ingestText('a-doc', 'ERR-9\n', { path: '/p/a.log' });
    await store.ingestText('c-doc', 'clean\n', { path: '/p/c.log' });
    const res = await store.grep('ERR-\\d', { count: true });
    expect(res.counts).toEqual({
      matches: 4,
      lines: 3,
      documents: [
        { id: 'a-doc', matches: 1, lines: 1 },
        { id: 'b-doc', matches: 3, lines: 2 },
      ],
    });
  });
});

describe('the document filter', () => {
  it('takes ids, ingested paths (every part of a file) and lists, and refuses an unknown name', async () => {
    for (const open of [
      async () => ChunkStore.open(storeDir(), { create: true }),
      async () => new MemoryChunkStore(),
    ]) {
      const store = await open();
      onTestFinished(() => store.close());
      await store.ingestText('one', 'alpha hit\n', { path: '/data/one.txt' });
      await store.ingestText('two', 'beta hit\n', { path: '/data/two.txt' });
      await store.ingestText('two.p2', 'gamma hit\n', { path: '/data/two.txt' });
      const ids = async (document: string | string[]) =>
        (await store.grep('hit', { document })).matches.map((m) => m.id);
      expect(await ids('one')).toEqual(['one:0']);
      expect(await ids('/data/two.txt')).toEqual(['two:0', 'two.p2:0']);
      expect(await ids(['one', '/data/two.txt'])).toEqual(['one:0', 'two:0', 'two.p2:0']);
      expect((await store.grep('hit', { document: '/data/two.txt', count: true })).counts?.matches).toBe(2);
      const err = await caught(store.grep('hit', { document: ['one', '/data/tow.txt'] }));
      expect(err.code).toBe('BAD_INPUT');
      expect(err.message).toContain('"/data/tow.txt"');
    }
  });
});

describe('the scan budget', () => {
  it('grows with the characters scanned, in CPU time', () => {
    // CPU and wall clocks in step, as on an idle machine.
    let now = 0;
    const clocks = { cpu: () => now, wall: () => now };
    const clock = new ScanClock(100, clocks);
    now = 99;
    expect(clock.over()).toBe(false);
    // 10 million characters buy 500 ms more.
    const big = new ScanClock(100, clocks);
    now += 550;
    big.add(10_000_000);
    expect(big.over()).toBe(false);
    now += 100;
    expect(big.over()).toBe(true);
    // Time spent reading files is given back.
    const reading = new ScanClock(100, clocks);
    now += 1000;
    reading.credit(950);
    expect(reading.over()).toBe(false);
  });

  it('is not spent by a busy machine: wall time passes, CPU time does not', () => {
    let wall = 0;
    let cpu = 0;
    const clock = new ScanClock(100, { cpu: () => cpu, wall: () => wall });
    // Other processes hold the cores: ten times the budget in wall time, half of it in CPU.
    wall = 1000;
    cpu = 50;
    expect(clock.over()).toBe(false);
    wall = 2000;
    cpu = 101;
    expect(clock.over()).toBe(true);
  });

  it('lets a simple pattern finish over a large text even with a tiny base budget', async () => {
    // 24 MB: with a fixed 1 ms budget this would time out; the allowance grows to ~1.2 s of CPU while
    // the scan needs a small fraction of it.
    const text = `${'INFO all good here\n'.repeat(400_000)}ERR-4242 the one\n`.repeat(3);
    const r = new GrepRunner([{ id: 'log', text, document: 'log' }], { timeoutMs: 1 });
    runners.push(r);
    const res = await r.grep('ERR-\\d{4}', { count: true });
    expect(res.counts?.matches).toBe(3);
    const listed = await r.grep('ERR-\\d{4}');
    expect(listed.matches.map((m) => m.documentOffset)).toHaveLength(3);
  });
});
