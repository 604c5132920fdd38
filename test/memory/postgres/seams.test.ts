/**
 * Chunk seams let the PostgreSQL store's grep narrow its scan with a trigram index without missing a
 * match that straddles chunk edges: every occurrence of a literal has its first SEAM_CHARS characters
 * in one chunk's text or one seam. Checked here on every literal of texts cut every way the chunkers
 * cut (back to back, overlapping, with gaps). No server needed.
 */
import { describe, expect, it } from 'vitest';
import { assemble } from '../../../memory/grep/grep-scan.ts';
import { documentSeams, grepChunkOf, SEAM_CHARS, type SeamChunk } from '../../../memory/postgres/seams.ts';
import { noise } from '../helpers/corpus.ts';

/** Chunks of `text` from `[start, end)` ranges, as a chunker would record them. */
function chunksOf(text: string, ranges: [number, number][]): SeamChunk[] {
  return ranges.map(([start, end], ordinal) => ({
    document: 'd',
    ordinal,
    start,
    end,
    text: text.slice(start, end),
  }));
}

/** Whether every occurrence of every literal of the assembled text passes the narrowing test. */
function everyLiteralFound(chunks: SeamChunk[], chunker: string): boolean {
  const seams = documentSeams(chunks, chunker);
  const rows = [...chunks.map((c) => c.text), ...seams];
  const { text } = assemble(chunks.map((c) => grepChunkOf(c, chunker)));
  for (let from = 0; from < text.length; from++) {
    for (const length of [3, 4, 7, 15, 16, 17, 31, 32, 33, 64, 120]) {
      if (from + length > text.length) continue;
      const probe = text.slice(from, from + Math.min(length, SEAM_CHARS));
      if (!rows.some((r) => r.includes(probe))) return false;
    }
  }
  return true;
}

describe('chunk seams', () => {
  const text = noise(11, 600);

  it('cover literals across back-to-back chunks, short chunks included', () => {
    const cuts = [0, 5, 9, 40, 41, 130, 300, 310, 600];
    const ranges = cuts.slice(1).map((end, i) => [cuts[i]!, end] as [number, number]);
    expect(everyLiteralFound(chunksOf(text, ranges), 'paragraph')).toBe(true);
    const seams = documentSeams(chunksOf(text, ranges), 'paragraph');
    expect(seams[0]).toBe('');
    expect(seams[3]).toBe(text.slice(40 - SEAM_CHARS, 40 + SEAM_CHARS));
  });

  it('cover literals across overlapping chunks and gaps (size and turn chunkers keep offsets)', () => {
    const overlapping: [number, number][] = [
      [0, 120],
      [100, 250],
      [240, 260],
      [245, 255], // inside the one before: read once, starts no edge
      [250, 420],
      [430, 600], // a gap: grep puts a line break between the two sides
    ];
    const chunks = chunksOf(text, overlapping);
    expect(everyLiteralFound(chunks, 'size')).toBe(true);
    expect(documentSeams(chunks, 'size')[3]).toBe('');
  });

  it('would miss literals without them', () => {
    const chunks = chunksOf(text, [
      [0, 300],
      [300, 600],
    ]);
    const across = text.slice(298, 302);
    expect(chunks.some((c) => c.text.includes(across))).toBe(false);
    expect(documentSeams(chunks, 'paragraph')[1]).toContain(across);
  });
});
