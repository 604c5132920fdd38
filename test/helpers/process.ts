/**
 * What a process is doing, read from /proc (Linux): for tests that check a process was stopped, or that
 * it no longer uses the CPU, by its state rather than by a stopwatch.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Whether `pid` still runs: a killed process not yet reaped is a zombie, and runs no more. */
function alive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Resolves once `pid` has stopped running (the test's timeout bounds the wait). */
export async function gone(pid: number): Promise<void> {
  while (alive(pid)) await sleep(20);
}

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if (statFields(Number(name))?.[1] === String(pid)) children.push(Number(name));
  }
  return children;
}

/** The children of `pid` whose command line holds `text` (the script a fork ran, say). */
export function childrenRunning(pid: number, text: string): number[] {
  return childrenOf(pid).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes(text);
    } catch {
      return false; // gone meanwhile
    }
  });
}

/**
 * Milliseconds the threads of `pid` (or only its thread `tid`) have spent running or waiting in a run
 * queue: time they wanted the CPU, whether or not a loaded machine gave it to them. 0 once it is gone.
 */
export function wantedCpuMs(pid: number, tid?: number): number {
  let total = 0;
  let tasks: string[];
  try {
    tasks = tid === undefined ? readdirSync(`/proc/${pid}/task`) : [String(tid)];
  } catch {
    return 0;
  }
  for (const task of tasks) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'latin1').split(' ');
      total += Number(run) + Number(wait);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return total / 1e6;
}

/**
 * The share of `ms` during which the threads of `pid` ran or waited to run: about 1 (or more) while a
 * thread spins, about 0 when the process is idle or gone. Unlike the CPU time a process gets, this does
 * not shrink when a loaded machine gives a spinning process less of a core: waiting for one counts too.
 */
export async function busyShare(pid: number, ms = 400): Promise<number> {
  const before = wantedCpuMs(pid);
  const started = performance.now();
  await sleep(ms);
  const after = wantedCpuMs(pid);
  if (after === 0) return 0;
  return (after - before) / (performance.now() - started);
}
