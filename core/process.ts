/** Facts about other processes on this machine. */
import { readFileSync } from 'node:fs';

/** True while process `pid` exists, ours or another user's (EPERM: it exists but is not ours to signal). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The number of the first field {@link procStat} gives (the process's state). */
export const FIRST_FIELD = 3;

/**
 * When process `pid` started, in clock ticks since the machine booted (/proc/PID/stat): with the pid, it
 * names one process for good, whatever the wall clock does. Undefined where /proc cannot tell (not
 * Linux, no such process).
 */
export function processStartTicks(pid: number): number | undefined {
  // starttime, field 22.
  const ticks = Number(procStat(pid)?.[22 - FIRST_FIELD]);
  return Number.isFinite(ticks) ? ticks : undefined;
}

/**
 * The fields of /proc/PID/stat from the third on (the state), or undefined where /proc cannot tell (not
 * Linux, no such process). Field N is at index `N - FIRST_FIELD`.
 */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid`, which started at `startTicks` ({@link processStartTicks}, when known), still
 * runs. A pid the system gave again to a newer process (common in containers, where pids stay small)
 * started at other ticks: not it.
 */
export function sameProcessAlive(pid: number, startTicks: number | undefined): boolean {
  if (!processAlive(pid)) return false;
  if (startTicks === undefined) return true;
  const now = processStartTicks(pid);
  return now === undefined || now === startTicks;
}
