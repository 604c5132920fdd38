/**
 * The CLI writes through its io (data on stdout, diagnostics on stderr); only dependencies use `console`,
 * for notices addressed to programmers (the Anthropic SDK warns with `console.warn` that a model is
 * deprecated). A CLI user should not see them: while a command runs, console output is dropped, or with
 * RLM_DEBUG written to stderr. Never to stdout, which carries the command's data (and over stdio, the MCP
 * protocol).
 */
import { format } from 'node:util';

const METHODS = ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir'] as const;
type Method = (typeof METHODS)[number];

let saved: Pick<Console, Method> | undefined;
let holders = 0;

/**
 * Sends console output to `sink` (a line at a time; nowhere when undefined) until the returned function
 * is called. Nested and concurrent commands (tests run several in one process) share one redirection,
 * undone when the last of them ends.
 */
export function quietConsole(sink: ((line: string) => void) | undefined): () => void {
  if (holders++ === 0) {
    saved = Object.fromEntries(METHODS.map((m) => [m, console[m]])) as Pick<Console, Method>;
    const write = sink ? (...args: unknown[]) => sink(format(...args)) : () => {};
    for (const m of METHODS) console[m] = write;
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--holders === 0 && saved) {
      Object.assign(console, saved);
      saved = undefined;
    }
  };
}
