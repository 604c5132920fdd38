import { describe, expect, it } from 'vitest';
import { LinkWindow } from '../../../memory/engine/link-window.ts';
import { buildTerms } from '../../../memory/search/segment.ts';
import type { ChunkRecord } from '../../../memory/types.ts';

const WORDS = 'quasar nebula pulsar comet orbit photon galaxy meteor zenith aurora'.split(' ');

/** Segment `s`: 5 one-chunk documents on the same few words, so chunks of every segment relate. */
function segment(s: number): { name: string; records: ChunkRecord[] } {
  const records = Array.from({ length: 5 }, (_, i) => {
    const words = Array.from({ length: 30 }, (_, k) => WORDS[(s * 3 + i * 7 + k * k) % WORDS.length]!);
    return { id: `d${s}-${i}:0`, document: `d${s}-${i}`, ordinal: 0, text: words.join(' ') } as ChunkRecord;
  });
  return { name: `seg-${String(s + 1).padStart(6, '0')}`, records };
}

function linkAll(window: LinkWindow, count: number) {
  return Array.from({ length: count }, (_, s) => {
    const { name, records } = segment(s);
    return { name, ...window.link(name, records, buildTerms(records.map((r) => r.text)), () => true) };
  });
}

describe('LinkWindow', () => {
  it('links within the latest segments covering its size, and as the whole store while the store fits', () => {
    const whole = linkAll(new LinkWindow(1000), 6);
    const bounded = linkAll(new LinkWindow(10), 6);
    // Segments 1 and 2 fit in 10 chunks: the same links and signatures as with every chunk in view.
    expect(bounded.slice(0, 2)).toEqual(whole.slice(0, 2));
    expect(whole.some((s, i) => s.edges.some((e) => Number(e.toSegment.slice(4)) < i))).toBe(true);
    for (const [i, s] of bounded.entries()) {
      // The window holds the segment before and the new one: no link reaches further back.
      for (const e of s.edges)
        expect(Number(e.toSegment.slice(4)), `${s.name} → ${e.toSegment}`).toBeGreaterThanOrEqual(i);
      expect(s.signatures).toHaveLength(5);
    }
    expect(bounded.flatMap((s) => s.edges).length).toBeGreaterThan(0);
  });

  it('loads the latest segments of a store and carries their positions into the links', () => {
    const window = new LinkWindow(1000);
    const first = linkAll(window, 1)[0]!;
    const { name, records } = segment(1);
    const next = window.link(name, records, buildTerms(records.map((r) => r.text)), () => true);
    for (const e of next.edges) {
      const target = e.toSegment === name ? records : segment(0).records;
      expect(target[e.toIdx]?.id, e.to).toBe(e.to);
    }
    expect(first.edges.every((e) => e.toSegment === first.name)).toBe(true);
  });
});
