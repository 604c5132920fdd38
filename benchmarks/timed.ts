/**
 * A command run as a user runs it, in a process of its own under `/usr/bin/time`: wall time (Node's start
 * included), CPU time (user + system: what the command itself cost, steadier than wall time on a shared
 * machine) and the kernel's peak RSS. Shared by the benchmarks that time the `rlm` command.
 */
import { spawnSync } from 'node:child_process';

export interface Timed {
  ms: number;
  cpuMs: number;
  rssMB: number;
  stdout: string;
  stdoutLines: number;
}

/** Runs `command ARGS` under /usr/bin/time; throws with its stderr when it fails. */
export function timed(command: string, args: string[]): Timed {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', command, ...args], {
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr.slice(-2000)}`);
  return {
    ms: Number(m[1]) * 1000,
    cpuMs: (Number(m[2]) + Number(m[3])) * 1000,
    rssMB: Number(m[4]) / 1024,
    stdout: r.stdout,
    stdoutLines: r.stdout === '' ? 0 : r.stdout.trimEnd().split('\n').length,
  };
}

/** `n` runs of the same command: the median of each figure, taken on its own. */
export function median(n: number, run: (i: number) => Timed): Timed {
  const runs = Array.from({ length: n }, (_, i) => run(i));
  const mid = (key: 'ms' | 'cpuMs' | 'rssMB') => runs.map((r) => r[key]).sort((a, b) => a - b)[n >> 1]!;
  return { ...runs[0]!, ms: mid('ms'), cpuMs: mid('cpuMs'), rssMB: mid('rssMB') };
}
