/**
 * grep over a file stored in parts (memory/SCHEMA.md: `ID`, `ID.p2`, …), the same on every backend: the
 * parts are read as the file's one text, as readDocument reads them. A match across a seam is found, with
 * its line, its context on both sides and its offset in the file; a count is one entry for the file; the
 * file's id takes its parts along in the document filter; a part changed and ingested again (into a later
 * segment) is still read in its place.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PART_BYTES } from '../../../memory/ingest/file-parts.ts';
import type { Store } from '../../../memory/store-api.ts';
import { tempDir } from '../../helpers/temp.ts';
import { backends } from '../helpers/backends.ts';

/** Numbered lines of varied length, with a two-byte character so that bytes and characters differ. */
function bigLog(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `line ${i} of the big log: café ${'x'.repeat(i % 40)}\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  return lines.join('');
}

/** A pattern whose every match runs from one line into the next, and the offsets grep must list. */
const ACROSS = 'x*\\nline \\d+';
const acrossOffsets = (text: string) => [...text.matchAll(new RegExp(ACROSS, 'g'))].map((m) => m.index);

/** The file's id, its later parts' ids and where each later part starts in the file's text. */
async function partsOf(store: Store): Promise<{ id: string; parts: string[]; seams: number[] }> {
  const ids = (await store.documents()).map((d) => d.id);
  const id = ids.find((d) => !/\.p\d+$/.test(d))!;
  const parts = Array.from({ length: ids.length - 1 }, (_, i) => `${id}.p${i + 2}`);
  expect(new Set(ids)).toEqual(new Set([id, ...parts]));
  // Each part read alone (readDocument by its own id) is the file's text from the seam before it.
  const seams: number[] = [];
  let at = (await store.readDocument(id))!.text.length;
  for (const part of parts.toReversed()) {
    at -= (await store.readDocument(part))!.text.length;
    seams.unshift(at);
  }
  return { id, parts, seams };
}

describe.each(backends('grep over parts conformance'))(
  'grep over a file in parts, %s store',
  (_name, backend) => {
    it('reads a file just over the part size as one text: across the seam, context, offsets, one count', async () => {
      const file = path.join(tempDir('rlm-grep-parts-'), 'big.log');
      const text = bigLog(PART_BYTES + 100_000);
      writeFileSync(file, text);
      const store = await backend.open();
      await store.ingestPaths([file]);
      const { id, parts, seams } = await partsOf(store);
      expect(parts).toHaveLength(1);
      const seam = seams[0]!;
      expect(text[seam - 1]).toBe('\n');
      const lines = text.split('\n').length - 1;
      const lastStart = text.lastIndexOf('\n', seam - 2) + 1;
      const n = Number(/^line (\d+) /.exec(text.slice(seam))![1]);

      // A regex and a literal that start on part 1's last line and end on part 2's first.
      const cafe = text.indexOf('café', lastStart);
      for (const [pattern, literal] of [
        [`café x*\\nline ${n} of`, false],
        [text.slice(cafe, text.indexOf(' of', seam) + 3), true],
      ] as const) {
        const found = await store.grep(pattern, { literal, context: 30 });
        expect(found.matches, pattern).toHaveLength(1);
        const m = found.matches[0]!;
        expect(m).toMatchObject({
          document: id,
          documentOffset: cafe,
          text: text.slice(lastStart, seam - 1),
          before: text.slice(lastStart - 30, lastStart),
          after: text.slice(seam - 1, seam + 29),
        });
        expect(m.id.startsWith(`${id}:`)).toBe(true);
        expect((await store.getChunk(m.id))!.text.slice(m.offset).startsWith('café')).toBe(true);
      }

      // Part 2's first line: its chunk, the file's offset, context reaching back into part 1.
      const first = await store.grep(`^line ${n} `, { context: 100 });
      expect(first.matches).toEqual([
        {
          id: `${parts[0]}:0`,
          offset: 0,
          document: id,
          documentOffset: seam,
          text: text.slice(seam, text.indexOf('\n', seam)),
          before: text.slice(seam - 100, seam),
          after: text.slice(text.indexOf('\n', seam), text.indexOf('\n', seam) + 100),
        },
      ]);
      expect((await store.readDocument(id, { start: seam, end: seam + 12 }))?.text).toBe(
        text.slice(seam, seam + 12),
      );
      // The file's id names all of it, as readDocument(ID) and rm ID do.
      expect((await store.grep(`^line ${n} `, { document: id })).matches).toHaveLength(1);

      const all = await store.grep(ACROSS, { limit: 100_000 });
      expect(all.matches.map((m) => m.documentOffset)).toEqual(acrossOffsets(text));
      expect(new Set(all.matches.map((m) => m.document))).toEqual(new Set([id]));
      expect((await store.grep(ACROSS, { count: true })).counts).toEqual({
        matches: lines - 1,
        lines: lines - 1,
        documents: [{ id, matches: lines - 1, lines: lines - 1 }],
      });
      expect((await store.grep('^line \\d+ ', { count: true })).counts?.documents).toEqual([
        { id, matches: lines, lines },
      ]);
    });

    it('reads many parts in order, whatever segments hold them, and stops at the limit where a whole read would', async () => {
      const file = path.join(tempDir('rlm-grep-parts-'), 'big.log');
      const opts = { partBytes: 40_000, segmentChars: 60_000 };
      let text = bigLog(480_000);
      writeFileSync(file, text);
      const store = await backend.open();
      await store.ingestPaths([file], opts);
      const lines = text.split('\n').length - 1;

      const check = async () => {
        const { id, parts, seams } = await partsOf(store);
        // Past `ID.p9`: parts in order by number, not as strings.
        expect(parts.length).toBeGreaterThan(10);
        const expected = acrossOffsets(text);
        const all = await store.grep(ACROSS, { limit: 100_000 });
        expect(all.matches.map((m) => m.documentOffset)).toEqual(expected);
        expect(all.truncated).toBe(false);
        expect((await store.grep(ACROSS, { count: true })).counts?.documents).toEqual([
          { id, matches: lines - 1, lines: lines - 1 },
        ]);
        for (const seam of seams) {
          const literal = text.slice(seam - 5, seam + 5);
          const hit = await store.grep(literal, { literal: true, limit: 100_000 });
          expect(hit.matches.map((m) => m.documentOffset)).toContain(seam - 5);
        }
        // A limit that falls just before, at and after the matches of a seam.
        const before = expected.filter((at) => at < seams[2]!).length;
        for (const limit of [before - 1, before, before + 1]) {
          const cut = await store.grep(ACROSS, { limit });
          expect(cut.matches.map((m) => m.documentOffset)).toEqual(expected.slice(0, limit));
          expect(cut.truncated).toBe(true);
        }
      };
      await check();
      // The first part changed: ingested again, it is written after the parts that stayed.
      text = `LINE${text.slice(4)}`;
      writeFileSync(file, text);
      const again = await store.ingestPaths([file], opts);
      expect(again).toMatchObject({ updated: 1 });
      await check();
    });
  },
);
