/**
 * Peak memory and CPU time of a process and all its descendants (rlm's isolate processes, say), sampled
 * from /proc in a worker thread so the sampling never delays the benchmark's own event loop (its fake server). Each sample
 * sums the processes' PSS (proportional set size: a page shared by two processes counts half in each, so
 * the sum is what the tree really occupies) and also notes the largest single RSS, the figure
 * `/usr/bin/time` reports. Linux only; elsewhere the figures are NaN.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/** Peaks in MB over the sampled lifetime, and the CPU time the tree used. */
export interface TreeMemory {
  /** Largest sum of PSS over the tree. */
  treeMB: number;
  /** Largest RSS of one process of the tree. */
  largestMB: number;
  /** Largest sum of user + system CPU time over the tree, ms (a process that ended between samples loses its last ones). */
  cpuMs: number;
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on every Linux that matters). */
const CLOCK_TICKS = 100;

/** CPU time (user + system) of one process, ms, or 0 when it is gone. */
function processCpuMs(pid: number): number {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** CPU time of `root` and every process below it now, ms. */
export function treeCpuMs(root: number): number {
  if (process.platform !== 'linux') return Number.NaN;
  return tree(root).reduce((n, pid) => n + processCpuMs(pid), 0);
}

const INTERVAL_MS = 20;

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Pids of `root` and every process below it. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    if (stat === null) continue;
    // Fields after the command name (which may hold spaces and parentheses): state, ppid, ...
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

function kb(text: string | null, field: string): number {
  const m = text === null ? null : new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Peak (VmHWM) and current (VmRSS) RSS of process `pid`, MB, from one read of its status (the two agree
 * with each other); NaN where there is no such status (not Linux, or the process is gone).
 */
export function processRssMB(pid: number): { peakMB: number; nowMB: number } {
  const status = read(`/proc/${pid}/status`);
  if (status === null) return { peakMB: Number.NaN, nowMB: Number.NaN };
  return { peakMB: kb(status, 'VmHWM') / 1024, nowMB: kb(status, 'VmRSS') / 1024 };
}

function sampleLoop(root: number, stop: Int32Array): void {
  let treeKb = 0;
  let largestKb = 0;
  let cpuMs = 0;
  while (Atomics.load(stop, 0) === 0) {
    let sum = 0;
    let cpu = 0;
    for (const pid of tree(root)) {
      sum += kb(read(`/proc/${pid}/smaps_rollup`), 'Pss');
      largestKb = Math.max(largestKb, kb(read(`/proc/${pid}/status`), 'VmHWM'));
      cpu += processCpuMs(pid);
    }
    treeKb = Math.max(treeKb, sum);
    cpuMs = Math.max(cpuMs, cpu);
    Atomics.wait(stop, 0, 0, INTERVAL_MS);
  }
  parentPort?.postMessage({ treeMB: treeKb / 1024, largestMB: largestKb / 1024, cpuMs } satisfies TreeMemory);
}

if (!isMainThread && (workerData as { treeMemory?: boolean })?.treeMemory === true) {
  const { root, stop } = workerData as { root: number; stop: SharedArrayBuffer };
  sampleLoop(root, new Int32Array(stop));
}

/** Starts sampling `pid`'s tree; the returned function stops and gives the peaks. */
export function watchTreeMemory(pid: number): () => Promise<TreeMemory> {
  if (process.platform !== 'linux')
    return async () => ({ treeMB: Number.NaN, largestMB: Number.NaN, cpuMs: Number.NaN });
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { treeMemory: true, root: pid, stop },
  });
  const result = new Promise<TreeMemory>((resolve, reject) => {
    worker.once('message', (m: TreeMemory) => resolve(m));
    worker.once('error', reject);
  });
  return async () => {
    Atomics.store(new Int32Array(stop), 0, 1);
    Atomics.notify(new Int32Array(stop), 0);
    const peaks = await result;
    await worker.terminate();
    return peaks;
  };
}
