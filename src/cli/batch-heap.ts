/**
 * Heap tuning for the commands that write a folder store in batches (`rlm ingest`, a folder's
 * `rlm repair`; a PostgreSQL repair writes in its server). Each batch
 * holds a segment's text, records and indexes for a second or more, long enough for V8 to promote them to
 * the old generation, where they die soon after. V8 lets that generation grow to about four times what
 * survives a full collection before it collects again, and it never gives the pages back: over an ingest
 * the peak RSS rose with the length of the run, not with the work in flight. A growth step of 10% keeps
 * the heap near what is alive (measured: 100 MB ingest peak RSS 569 → 466 MB, 1 GB 747 → ~500 MB, at the
 * same CPU time). Set once, for this process only: the CLI owns its process; the library never does this.
 *
 * The young generation: bin/rlm.js stops it growing at start (V8 would grow it to semi-spaces of 32-64
 * MiB, all of it resident), but at its initial 1-2 MiB an ingest ran a scavenge per megabyte allocated
 * (900 for 40 MB of text), each with a fixed cost: about a tenth of the CPU time. It is let grow to
 * {@link YOUNG_MIB} and stopped there: the scavenges go, for a few MB of RSS.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Semi-space size the young generation may reach, MiB. */
const YOUNG_MIB = 8;

let tuned = false;

/**
 * Tunes the heap for a batch command; returns what to call when the batches are done (the young
 * generation then stops growing wherever it is, so whatever runs after never grows it).
 */
export function keepHeapNearLiveSet(): () => void {
  if (!tuned) {
    tuned = true;
    setFlagsFromString('--heap-growing-percent=10');
    boundYoungGeneration();
  }
  return stopYoungGrowth;
}

let observer: PerformanceObserver | undefined;

function stopYoungGrowth(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  observer?.disconnect();
  observer = undefined;
}

function youngMiB(): number {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return (space?.space_size ?? 0) / 2 ** 20;
}

/** Lets the young generation double until it reaches YOUNG_MIB, then stops its growth (checked after each GC). */
function boundYoungGeneration(): void {
  if (youngMiB() >= YOUNG_MIB) {
    stopYoungGrowth();
    return;
  }
  setFlagsFromString('--semi-space-growth-factor=2');
  observer = new PerformanceObserver(() => {
    if (youngMiB() >= YOUNG_MIB) stopYoungGrowth();
  });
  observer.observe({ entryTypes: ['gc'] });
}
