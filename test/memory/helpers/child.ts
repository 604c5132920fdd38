import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { onTestFinished } from 'vitest';

/** What a child process did: exit code or signal, and all it printed. */
export interface ChildResult {
  code: number | null;
  signal: string | null;
  out: string;
  err: string;
}

/** A running child: its input, and what it did once it exits. */
export interface RunningChild {
  stdin: Writable;
  done: Promise<ChildResult>;
}

/** Starts the Node script `file` with `args`, within a test; it is killed when the test ends, if still running. */
export function startChild(file: string, args: string[]): RunningChild {
  const proc = spawn(process.execPath, [file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  onTestFinished(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => {
    out += String(d);
  });
  proc.stderr.on('data', (d) => {
    err += String(d);
  });
  const done = new Promise<ChildResult>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal, out, err })),
  );
  return { stdin: proc.stdin, done };
}

/** Runs the Node script `file` with `args` to its end, with no input. */
export function runChild(file: string, args: string[]): Promise<ChildResult> {
  const child = startChild(file, args);
  child.stdin.end();
  return child.done;
}
