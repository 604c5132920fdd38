import { Readable } from 'node:stream';
import type { CliIO } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';

export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
  json<T = Record<string, unknown>>(): T;
}

/** Runs the CLI in-process with captured output. */
export async function cli(
  args: string[],
  opts: {
    env?: Record<string, string>;
    cwd?: string;
    /** stdin text, or its chunks as they arrive (to split a character across reads). */
    stdin?: string | Uint8Array[];
    tty?: boolean;
  } = {},
): Promise<Captured> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: { write: (s: string) => (stdout += s), isTTY: opts.tty ?? false },
    stderr: { write: (s: string) => (stderr += s), isTTY: opts.tty ?? false, columns: 100 },
    // With `tty`, stdin is a terminal too, so commands may ask questions (answered by `stdin`).
    stdin: Object.assign(Readable.from(Array.isArray(opts.stdin) ? opts.stdin : [opts.stdin ?? '']), {
      isTTY: opts.tty ?? false,
    }),
    env: { PATH: process.env.PATH, ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
  };
  const code = await main(args, io);
  return { code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T };
}
