/**
 * Heap tuning for the work that writes a store in batches (`rlm ingest`, a folder's `rlm repair`,
 * `rlm store copy`, the MCP server's `rlm_ingest`; a PostgreSQL repair writes in its server). Each batch
 * holds a segment's text, records and indexes for a second or more, long enough for V8 to promote them to
 * the old generation, where they die soon after. V8 lets that generation grow to about four times what survives a full
 * collection before it collects again, and it never gives the pages back: over an ingest the peak RSS
 * rose with the length of the run, not with the work in flight. A growth step of 10% keeps the heap near
 * what is alive (measured: 100 MB ingest peak RSS 569 → 466 MB, 1 GB 747 → ~500 MB, at the same CPU
 * time).
 *
 * The young generation: V8 grows it to semi-spaces of 32-64 MiB under an ingest's allocation rate, all of
 * it resident, but at its initial 1-2 MiB an ingest ran a scavenge per megabyte allocated (900 for 40 MB
 * of text), each with a fixed cost: about a tenth of the CPU time. It is let grow to {@link YOUNG_MIB}
 * and stopped there: the scavenges go, for a few MB of RSS. (bin/rlm.js stops its growth at start for the
 * batch commands, before anything allocates; a server enters here with whatever its work so far grew.)
 *
 * The flags are V8's, for the whole process: only a process rlm owns (the CLI, `rlm serve`) tunes them,
 * and it gives V8's defaults back when its last batch ends. The library never does this on its own: a
 * program that ingests big corpora chooses its flags itself (README, "Memory of a big ingest").
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Semi-space size the young generation may reach while a batch runs, MiB. */
const YOUNG_MIB = 8;
/** V8's own values of the two flags (`node --v8-options`), given back when the last batch ends. */
const DEFAULT_GROWING_PERCENT = 0;
const DEFAULT_SEMI_SPACE_GROWTH = 2;

/** Batches running now; the tuning holds while any does. */
let running = 0;
let observer: PerformanceObserver | undefined;

/** Options of {@link keepHeapNearLiveSet}. */
export interface BatchHeapOptions {
  /**
   * What the tuning leaves when the last batch ends: V8's defaults (a server, whose later work is not a
   * batch), or the young generation stopped where it is (a CLI command about to exit: what runs after
   * never grows it, as bin/rlm.js set it at start). Default `'defaults'`.
   */
  after?: 'defaults' | 'stopped';
  /**
   * The old generation's growth step, percent of what survived the last full collection. Default 10,
   * right for an ingest, whose chunking and token counting leave the collector time. A store copy
   * promotes garbage faster (nothing but reading and writing between batches): with the flags given at
   * Node's start, one copy of a 335 MB store took 63 s of CPU at 10% against 47-50 s at 50%. Under
   * `rlm store copy` itself the peak RSS was 310-321 MB at 10, 25 and 50% alike (535-560 MB with V8's
   * defaults), so a copy asks for 50, the step that costs the collector least. The first of overlapping
   * batches sets it.
   */
  growthPercent?: number;
}

/**
 * Keeps the heap near its live set until the returned function is called (once; later calls do
 * nothing). Batches may overlap (two `rlm_ingest` calls on one server): the tuning ends when the last of
 * them ends.
 */
export function keepHeapNearLiveSet(opts: BatchHeapOptions = {}): () => void {
  if (running++ === 0) {
    setFlagsFromString(`--heap-growing-percent=${opts.growthPercent ?? 10}`);
    boundYoungGeneration();
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--running > 0) return;
    stopYoungGrowth();
    if (opts.after === 'stopped') return;
    setFlagsFromString(`--heap-growing-percent=${DEFAULT_GROWING_PERCENT}`);
    setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_SEMI_SPACE_GROWTH}`);
  };
}

/** True while a batch holds the tuning (tests). */
export function heapTuned(): boolean {
  return running > 0;
}

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
  setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_SEMI_SPACE_GROWTH}`);
  observer = new PerformanceObserver(() => {
    if (youngMiB() >= YOUNG_MIB) stopYoungGrowth();
  });
  observer.observe({ entryTypes: ['gc'] });
}
