/**
 * The `rlm` command: a thin dispatcher over the library. Data goes to stdout, diagnostics to stderr.
 * Exit codes: 0 ok, 1 failure, 2 usage error (bad flag, missing file, bad input).
 */
import { readFileSync } from 'node:fs';
import { readEnv } from '../../core/env.ts';
import { isRlmError } from '../../core/errors.ts';
import {
  type CliIO,
  type Command,
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_USAGE,
  oneLine,
  processIO,
  shown,
  writeError,
} from './io.ts';
import { quietConsole } from './quiet-console.ts';

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  answer: {
    summary: 'answer a question over files or a store with a recursive LM',
    load: async () => (await import('./commands/answer.ts')).default,
  },
  exec: {
    summary: "run JavaScript in a sandbox session with the model's globals",
    load: async () => (await import('./commands/exec.ts')).default,
  },
  ingest: {
    summary: 'add files and folders to a store',
    load: async () => (await import('./commands/ingest.ts')).default,
  },
  search: {
    summary: 'ranked search over a store (BM25, hybrid with vectors)',
    load: async () => (await import('./commands/query.ts')).search,
  },
  peek: {
    summary: 'show one chunk with its links',
    load: async () => (await import('./commands/query.ts')).peek,
  },
  grep: {
    summary: 'regex or literal search over all chunk text',
    load: async () => {
      // The grep worker boots on its own thread while the command's modules load and the store opens.
      (await import('../../memory/grep/grep.ts')).prestartGrepWorker();
      return (await import('./commands/query.ts')).grep;
    },
  },
  links: {
    summary: 'list the links of a chunk',
    load: async () => (await import('./commands/links.ts')).links,
  },
  link: {
    summary: 'link two chunks by hand (supports / contradicts)',
    load: async () => (await import('./commands/links.ts')).link,
  },
  ls: {
    summary: 'list the documents of a store',
    load: async () => (await import('./commands/admin.ts')).ls,
  },
  stats: { summary: 'store totals', load: async () => (await import('./commands/admin.ts')).stats },
  rm: { summary: 'forget a document', load: async () => (await import('./commands/admin.ts')).rm },
  store: {
    summary: 'copy a store between backends (folder, PostgreSQL): rlm store copy SRC DST',
    load: async () => (await import('./commands/store.ts')).default,
  },
  repair: {
    summary: 'rebuild derived files (indexes, links) from chunk data',
    load: async () => (await import('./commands/admin.ts')).repair,
  },
  ...memoryCommands({
    remember: 'store a memory (decision, preference, fact) in a store',
    recall: 'find memories by meaning, weighted by importance and age',
    forget: 'delete memories for good',
    topics: 'list memory topics with their counts',
    decay: 'apply decay: archive memories whose weight fell under the threshold',
    restore: 'bring archived memories back',
    consolidate: "summarize a topic's memories with a model, archiving the sources",
  }),
  claude: {
    summary: 'Claude Code history: ingest, projects, timeline, recall, forget, hooks, context',
    load: async () => (await import('./commands/claude.ts')).default,
  },
  trace: {
    summary: 'view a trace: a recursion tree in the terminal or one HTML page (rlm trace show|html FILE)',
    load: async () => (await import('./commands/trace.ts')).default,
  },
  serve: {
    summary: 'run the MCP server (stdio or HTTP)',
    load: async () => (await import('./commands/serve.ts')).default,
  },
  bench: {
    summary: 'run the long-context benchmark suites',
    // The command lives with the suites it runs: benchmarks/ builds on src/, never the other way round,
    // and this lazy import is the one place src/ reaches into benchmarks/.
    load: async () => (await import('../../benchmarks/cli.ts')).default,
  },
};

type MemoryCommand = keyof typeof import('./commands/memory.ts');
function memoryCommands(summaries: Partial<Record<MemoryCommand, string>>) {
  return Object.fromEntries(
    Object.entries(summaries).map(([name, summary]) => [
      name,
      { summary, load: async () => (await import('./commands/memory.ts'))[name as MemoryCommand] },
    ]),
  ) as Record<string, { summary: string; load: () => Promise<Command> }>;
}

function version(): string {
  // src/cli/main.ts runs from source in development and from dist/src/cli/main.js when installed.
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      return (
        JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name: string; version: string }
      ).version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'usage: rlm <command> [options]   (rlm <command> --help for its options; rlm --version)',
    '',
    'commands:',
    ...lines,
    '',
    'exit codes: 0 ok, 1 failure, 2 usage error, 130 interrupted (Ctrl-C)',
    '',
  ].join('\n');
}

export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  const [name, ...rest] = argv;
  // Asked for, the usage is the data; given because no command was, it is a usage error's diagnostic.
  if (name === undefined) {
    io.stderr.write(usage());
    return EXIT_USAGE;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    // `rlm help answer` is `rlm answer --help`.
    if (name === 'help' && rest.length > 0) return main([rest[0]!, '--help'], io);
    io.stdout.write(usage());
    return EXIT_OK;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${version()}\n`);
    return EXIT_OK;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    const near = Object.keys(COMMANDS).find((c) => oneEditApart(c, name));
    const hint = near === undefined ? ' (rlm --help lists the commands)' : `; did you mean '${near}'?`;
    writeError(io, `unknown command '${name}'${hint}`, 'BAD_INPUT');
    return EXIT_USAGE;
  }
  const restoreConsole = quietConsole(
    readEnv(io.env).debug ? (line) => void io.stderr.write(`${line}\n`) : undefined,
  );
  try {
    const command = await entry.load();
    return await command(rest, io);
  } catch (err) {
    return reportError(err, io);
  } finally {
    restoreConsole();
  }
}

/** Whether `b` is `a` with one character added, removed, changed, or two neighbours swapped. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const rest = (x: string, skip: number) => x.slice(i + skip);
  if (a.length === b.length)
    return rest(a, 1) === rest(b, 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && rest(a, 2) === rest(b, 2));
  return a.length > b.length ? rest(a, 1) === rest(b, 0) : rest(a, 0) === rest(b, 1);
}

/** Codes that mean the command was asked for something impossible: usage errors, exit 2. */
const USAGE_CODES = new Set(['BAD_INPUT', 'STORE_MISSING', 'VALIDATION']);

/**
 * One clear line on stderr. A stack trace only with RLM_DEBUG=1. Messages quote what they were given and
 * what a store holds (an id typed, a path, a file name from a manifest), so they are shown as data.
 */
export function reportError(err: unknown, io: CliIO): number {
  if (isRlmError(err)) {
    writeError(io, err.message, err.code);
    if (err.code === 'ABORTED') return EXIT_INTERRUPTED;
    return USAGE_CODES.has(err.code) ? EXIT_USAGE : EXIT_FAILURE;
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT' && e.path) {
    writeError(io, `no such file or directory: ${e.path}`, 'BAD_INPUT');
    return EXIT_USAGE;
  }
  // A file this user may not read or write: the same error, whichever step met it.
  if ((e?.code === 'EACCES' || e?.code === 'EPERM') && e.path) {
    writeError(
      io,
      `${e.path}: permission denied (${e.code}); check its owner and mode (ls -l)`,
      'ACCESS_DENIED',
    );
    return EXIT_FAILURE;
  }
  // Not an RlmError: a bug, which has no code of the contract's to print.
  const line = (text: string) => io.stderr.write(`rlm: ${shown(io.stderr, text, true)}\n`);
  if (readEnv(io.env).debug) io.stderr.write(`${shown(io.stderr, e?.stack ?? String(err))}\n`);
  const what = e?.code && e.path ? `${e.code}: ${e.path}` : oneLine(e?.message ?? String(err));
  line(`unexpected error: ${what} (RLM_DEBUG=1 shows the stack)`);
  return EXIT_FAILURE;
}

/** Runs the CLI in this process with its arguments and sets the exit code. */
export async function run(): Promise<void> {
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  process.exitCode = await main(process.argv.slice(2));
}

/**
 * `rlm grep ... | head` closes the pipe early: stop quietly, as grep does, instead of dying on an
 * unhandled EPIPE with a stack trace. The reader has what it wanted, so the exit code is 0.
 */
export function quietOnClosedPipe(
  stream: NodeJS.EventEmitter,
  exit: (code: number) => void = process.exit,
): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') exit(EXIT_OK);
    else throw err;
  });
}
