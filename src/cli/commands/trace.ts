import path from 'node:path';
import { RlmError } from '../../../core/errors.ts';
import { folderProblem } from '../../../core/paths.ts';
import { writeFileAtomic } from '../../../memory/fsutil.ts';
import { readTraceFile, renderTraceTree, selectRun } from '../../runtime/trace-render.ts';
import { buildTrajectories } from '../../runtime/trajectory.ts';
import { parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, shown, stdoutColor, writeJson } from '../io.ts';

const HELP = `usage: rlm trace show FILE [--full] [--run ID] [--json] [--color | --no-color]
       rlm trace html FILE [--out F] [--run ID]

Reads a trace written by \`rlm answer --trace FILE\` (several runs may share one file).

show   prints the recursion tree: each run under its id's first characters (what --run takes), model
       calls with tokens and cost, code blocks and their output, sub-calls indented by depth, and the
       final answer. Texts are cut to one line unless --full.
html   writes one self-contained HTML page (no network needed) to view the run in a browser: a
       collapsible tree of turns and sub-calls, whole code and outputs, tokens, cost and time per node,
       a timeline of sub-calls, search. Default output: FILE with .html in place of its extension.

options:
  --full         show: every line of each block, output, prompt and answer
  --run ID       only the run with this id (a unique prefix is enough); default every run in FILE
  --json         show: print the parsed tree, a JSON array with one object per run
  --out F        html: where to write the page ('-' for stdout)
  --color        show: ANSI colours (default when stdout is a terminal; --no-color to turn off)
`;

export default async function trace(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    color: { type: 'boolean' },
    'no-color': { type: 'boolean' },
    full: { type: 'boolean' },
    run: { type: 'string' },
    json: { type: 'boolean' },
    out: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  const [sub, file, ...rest] = positionals;
  if ((sub !== 'show' && sub !== 'html') || !file || rest.length > 0)
    throw new RlmError(
      'BAD_INPUT',
      'usage: rlm trace show FILE | rlm trace html FILE (see rlm trace --help)',
    );
  const events = await readTraceFile(path.resolve(io.cwd, file));
  const runEvents = values.run === undefined ? events : selectRun(events, values.run);

  if (sub === 'html') {
    if (values.full || values.json)
      throw new RlmError('BAD_INPUT', 'trace html: --full and --json are for show');
    const { renderTraceHtml } = await import('../../runtime/trace-html.ts');
    const out = values.out ?? file.replace(/(\.[^./\\]*)?$/, '.html');
    const html = renderTraceHtml(runEvents);
    if (out === '-') {
      io.stdout.write(html);
    } else {
      const target = path.resolve(io.cwd, out);
      if (target === path.resolve(io.cwd, file))
        throw new RlmError(
          'BAD_INPUT',
          `trace html: the page would overwrite the trace ${target}; give --out F`,
        );
      try {
        await writeFileAtomic(target, html);
      } catch (err) {
        const problem = folderProblem(target);
        if (problem === undefined) throw err;
        throw new RlmError(
          'BAD_INPUT',
          `trace html: cannot write ${target}: ${problem}`,
          { path: target },
          { cause: err },
        );
      }
      io.stderr.write(`rlm: wrote ${shown(io.stderr, target, true)}\n`);
    }
    return EXIT_OK;
  }

  if (values.out !== undefined) throw new RlmError('BAD_INPUT', 'trace show: --out is for html');
  if (values.json) {
    writeJson(io, buildTrajectories(runEvents));
    return EXIT_OK;
  }
  const color = values.color === true || (values['no-color'] !== true && stdoutColor(io));
  // Every string of the trace is data (model replies, code, outputs, errors): escaped before rendering,
  // so the only escape sequences that reach a terminal are the renderer's own colours.
  const text = renderTraceTree(
    mapStrings(runEvents, (s) => shown(io.stdout, s)),
    {
      color,
      ...(values.full === true ? { full: true } : {}),
      ...(io.stdout.isTTY ? { width: 120 } : {}),
    },
  );
  io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return EXIT_OK;
}

/** `value` with `fn` applied to every string inside it (a trace event is plain JSON data). */
function mapStrings<T>(value: T, fn: (s: string) => string): T {
  if (typeof value === 'string') return fn(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)])) as T;
  return value;
}
