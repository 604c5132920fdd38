/**
 * Which segments a folder store merges. Every write commits a segment of its own: an ingest of one file,
 * a Claude Code session imported by the hook, a folded memory journal. Left alone they pile up (a store
 * that took one session a day holds hundreds), and every grep, cold search and link window pays per
 * segment. Once enough segments are small (few live chunks: little text, or mostly replaced or deleted
 * documents), they are rewritten together into segments of about an ingest batch (purge.ts
 * `rewriteSegments`, which carries their links over), in one commit. What stays small is left alone
 * until there are enough again, so a store of many small writes merges once every few writes, not at
 * each one.
 */
import { segmentName } from './segment.ts';

/** When segments merge. */
export interface MergeThresholds {
  /** Live chunks under which a segment counts as small (an ingest batch of prose makes about 2,000). */
  small: number;
  /** Small segments a store holds before they are merged. */
  at: number;
  /** Live chunks a merged segment gathers at most. */
  merged: number;
}

let thresholds: MergeThresholds = { small: 256, at: 8, merged: 2_048 };

/** Sets {@link MergeThresholds} (tests, benchmarks); returns the previous ones. */
export function setMergeThresholds(next: MergeThresholds): MergeThresholds {
  const before = thresholds;
  thresholds = next;
  return before;
}

/**
 * The merges to make, as old segment name → new name (several old names share one), with the next free
 * segment number after them (`counts` gives each segment's live chunks); undefined when fewer than `at`
 * segments are small ({@link MergeThresholds}).
 * Segments are taken in store order; a group closes before it would pass `merged` chunks, and a group of
 * one is left.
 */
export function planMerges(
  segments: readonly string[],
  counts: () => ReadonlyMap<string, number>,
  nextSegment: number,
): { renamed: Map<string, string>; nextSegment: number } | undefined {
  const { small: under, at, merged } = thresholds;
  // Counting live chunks is a pass over every document: not for a store with too few segments to merge.
  if (segments.length < at) return undefined;
  const liveChunks = counts();
  const small = segments.filter((s) => (liveChunks.get(s) ?? 0) < under);
  if (small.length < at) return undefined;
  const groups: string[][] = [];
  let group: string[] = [];
  let chunks = 0;
  for (const s of small) {
    const n = liveChunks.get(s) ?? 0;
    if (group.length > 0 && chunks + n > merged) {
      groups.push(group);
      group = [];
      chunks = 0;
    }
    group.push(s);
    chunks += n;
  }
  groups.push(group);
  const renamed = new Map<string, string>();
  let next = nextSegment;
  for (const g of groups) {
    if (g.length < 2) continue;
    const name = segmentName(next++);
    for (const s of g) renamed.set(s, name);
  }
  return renamed.size === 0 ? undefined : { renamed, nextSegment: next };
}
