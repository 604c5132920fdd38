import path from 'node:path';
import { RlmError } from '../../errors.ts';
import { renderTraceFile } from '../../runtime/trace-render.ts';
import { parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, stdoutColor } from '../io.ts';

const HELP = `usage: rlm trace show FILE [--color | --no-color]

Prints a trace written by \`rlm answer --trace FILE\` as a recursion tree: model calls with tokens and
cost, code blocks and their output, sub-calls indented by depth, and the final answer. Colours on a
terminal unless NO_COLOR is set or --no-color is given.
`;

export default async function trace(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    color: { type: 'boolean' },
    'no-color': { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  const [sub, file, ...rest] = positionals;
  if (sub !== 'show' || !file || rest.length > 0)
    throw new RlmError('BAD_INPUT', 'usage: rlm trace show FILE');
  const color = values.color === true || (values['no-color'] !== true && stdoutColor(io));
  const text = await renderTraceFile(path.resolve(io.cwd, file), {
    color,
    ...(io.stdout.isTTY ? { width: 120 } : {}),
  });
  io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  return EXIT_OK;
}
