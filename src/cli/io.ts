import { type Env, processEnv, readEnv } from '../../core/env.ts';
import { escapeControls } from '../../core/terminal-text.ts';

/** The CLI's view of the outside world, passed in so commands are testable without a real terminal. */
export interface CliIO {
  /** `writable` turns false once a write found the reader gone (`rlm grep … | head -1`). */
  stdout: { write(s: string): unknown; isTTY?: boolean; writable?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream;
  /** The environment; its values come from `readEnv(io.env)` (core/env.ts). */
  env: Env;
  cwd: string;
}

/** Exit codes: 0 ok, 1 failure, 2 usage error (see README). */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** Interrupted by Ctrl-C (SIGINT), as shells report it: 128 + 2. */
export const EXIT_INTERRUPTED = 130;

export type Command = (argv: string[], io: CliIO) => Promise<number>;

export function processIO(): CliIO {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: processEnv(),
    cwd: process.cwd(),
  };
}

/**
 * All of stdin as text. Chunks are joined as bytes before decoding, so a UTF-8 character split across two
 * chunks (pipes deliver 64 KiB at a time, at any byte) is not turned into replacement characters.
 */
export async function readStdin(io: Pick<CliIO, 'stdin'>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

export function writeJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Whether stdout's reader has gone (a write failed with EPIPE): notes about that output, such as "stopped
 * at 100 matches", would then only reach a person who did not ask for them.
 */
export function readerGone(io: CliIO): boolean {
  return io.stdout.writable === false;
}

/**
 * Data (a file name, chunk text, model output) as it is written to `out`: on a terminal its control
 * characters are shown escaped, so no file or model can drive the terminal (set its title, clear it,
 * write the clipboard, fake a line); written to a pipe or a file it stays exact, as `--json` always is.
 * `inline` escapes line breaks and tabs too, for a value that must stay on its line. Every printer of
 * human-readable output passes its data through here.
 */
export function shown(out: { isTTY?: boolean }, text: string, inline = false): string {
  return out.isTTY === true ? escapeControls(text, inline) : text;
}

/**
 * Writes an error as the contract has it, one line `rlm: MESSAGE [CODE]` on stderr. The message (it may
 * quote a path, an id, a model's error) is shown as {@link shown} shows it, its line breaks joined.
 */
export function writeError(io: Pick<CliIO, 'stderr'>, message: string, code: string): void {
  io.stderr.write(`rlm: ${shown(io.stderr, oneLine(message), true)} [${code}]\n`);
}

/** `s` on one line: its line breaks, and the spaces around them, become one space. */
export function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ');
}

/** Writes `rlm: warning: MESSAGE` to stderr, the message (it may quote a path or a name) as {@link shown} shows it. */
export function writeWarning(io: Pick<CliIO, 'stderr'>, message: string): void {
  io.stderr.write(`rlm: warning: ${shown(io.stderr, message, true)}\n`);
}

/** Colours on stdout: only on a terminal, and never when NO_COLOR is set to anything (no-color.org). */
export function stdoutColor(io: CliIO): boolean {
  return io.stdout.isTTY === true && readEnv(io.env).color;
}

/** Whether a person can answer a question: stdin and stderr are both terminals. */
export function canAsk(io: CliIO): boolean {
  return (io.stdin as { isTTY?: boolean }).isTTY === true && io.stderr.isTTY === true;
}

/** Writes `question` to stderr and resolves with the next line typed on stdin ('' at end of input). */
export async function ask(io: CliIO, question: string): Promise<string> {
  io.stderr.write(question);
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of rl) return line;
    return '';
  } finally {
    rl.close();
  }
}
