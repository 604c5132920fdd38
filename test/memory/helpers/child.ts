import { spawn } from 'node:child_process';

/** What a child process did: exit code or signal, and all it printed. */
export interface ChildResult {
  code: number | null;
  signal: string | null;
  out: string;
  err: string;
}

/** Runs the Node script `file` with `args` to its end. */
export function runChild(file: string, args: string[]): Promise<ChildResult> {
  const proc = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => {
    out += String(d);
  });
  proc.stderr.on('data', (d) => {
    err += String(d);
  });
  return new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal, out, err })));
}
