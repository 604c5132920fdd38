/**
 * `rlm claude context`: what rlm remembers about a project (src/claude/context.ts), as the text a Claude
 * Code session starts with. `--hook` is the form the plugin's SessionStart hook runs: the project is the
 * `cwd` of the hook's input, and it never fails: problems go to the hook log and nothing is printed.
 */
import path from 'node:path';
import { parseDecimal } from '../../../core/decimal.ts';
import { readEnv } from '../../../core/env.ts';
import { isRlmError, RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { DEFAULT_CONTEXT_TOKENS, type ProjectContext, projectContext } from '../../claude/context.ts';
import { note, readHookInput } from '../../claude/hook-run.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, shown, writeJson } from '../io.ts';
import { openStore, positionals } from '../store-arg.ts';

const HELP = `usage: rlm claude context [--project DIR] [--max-tokens N] [--hook [--log FILE]] [--json] --store DIR

What rlm remembers about a project, as a short text to start a Claude Code session with: the project's
heaviest memories (those tagged project:DIR), then memories of no project, then the project's recent
sessions, within --max-tokens tokens (default $RLM_CONTEXT_TOKENS, else ${DEFAULT_CONTEXT_TOKENS}). Prints nothing when
there is nothing to say. DIR defaults to the working directory; a project matches when either folder
lies inside the other. --store falls back to $RLM_STORE.

--hook is the form a SessionStart hook runs: it reads the hook's JSON from stdin (cwd, session_id), leaves
the starting session out, prints the text on stdout for Claude Code to add to the session, and always
exits 0; problems go to the log (default rlm-hook.log in $CLAUDE_CONFIG_DIR, else ~/.claude).

--json: {project, memories:[{id, text, topic, importance, weight, created, project}], sessions:[{session,
project, title, start, end, exchanges}], tokens, text}
`;

export async function context(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    project: { type: 'string' },
    'max-tokens': { type: 'string' },
    hook: { type: 'boolean' },
    log: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  positionals(pos, [], 'claude context');
  if (!values.hook) {
    const maxTokens = budget(values['max-tokens'], io.env);
    const project = path.resolve(io.cwd, values.project ?? '.');
    const { context: r, unfit } = await build(io, values.store, project, maxTokens, undefined, !values.json);
    if (values.json) writeJson(io, r);
    else if (unfit) {
      const tokens = plural(maxTokens ?? DEFAULT_CONTEXT_TOKENS, 'token');
      io.stderr.write(
        `rlm: nothing rlm remembers about ${shown(io.stderr, r.project, true)} fits in ${tokens} (--max-tokens N)\n`,
      );
    } else if (r.text === '')
      io.stderr.write(`rlm: nothing remembered about ${shown(io.stderr, r.project, true)}\n`);
    else io.stdout.write(shown(io.stdout, r.text));
    return EXIT_OK;
  }
  // A Claude Code that rlm runs as a model must see only the prompt rlm gives it.
  if (readEnv(io.env).modelCall) return EXIT_OK;
  const log = path.resolve(io.cwd, values.log ?? path.join(readEnv(io.env).claudeConfigDir, 'rlm-hook.log'));
  try {
    const maxTokens = budget(values['max-tokens'], io.env);
    const input = await readHookInput(io.stdin);
    const cwd = typeof input.cwd === 'string' && input.cwd !== '' ? input.cwd : io.cwd;
    const session = typeof input.session_id === 'string' ? input.session_id : undefined;
    const { context: r } = await build(io, values.store, path.resolve(io.cwd, cwd), maxTokens, session);
    if (values.json) writeJson(io, r);
    else io.stdout.write(r.text);
  } catch (err) {
    // No store yet is not a problem: nothing has been remembered.
    if (!(isRlmError(err) && err.code === 'STORE_MISSING'))
      note(
        log,
        `error: session start context: ${isRlmError(err) ? `${err.message} [${err.code}]` : String(err)}`,
      );
  }
  return EXIT_OK;
}

/** The token budget: --max-tokens, else RLM_CONTEXT_TOKENS, else undefined (the default). */
function budget(flag: string | undefined, env: CliIO['env']): number | undefined {
  if (flag !== undefined) return intFlag(flag, '--max-tokens', 1);
  const value = readEnv(env).contextTokens;
  if (value === undefined) return undefined;
  const n = parseDecimal(value);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new RlmError('BAD_INPUT', `RLM_CONTEXT_TOKENS must be an integer >= 1, got '${value}'`);
  return n;
}

/**
 * The context of `project`, and with `explain`, whether an empty one is empty because nothing fits the
 * budget (`unfit`) rather than because nothing is remembered: asked again without a budget, only then.
 */
async function build(
  io: CliIO,
  storeFlag: string | undefined,
  project: string,
  maxTokens: number | undefined,
  session?: string,
  explain = false,
): Promise<{ context: ProjectContext; unfit: boolean }> {
  const store = await openStore(storeFlag, io);
  try {
    const opts = { cwd: project, ...(session !== undefined ? { session } : {}) };
    const context = await projectContext(store, {
      ...opts,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
    });
    const unfit =
      explain &&
      context.text === '' &&
      (await projectContext(store, { ...opts, maxTokens: Number.MAX_SAFE_INTEGER })).text !== '';
    return { context, unfit };
  } finally {
    await store.close();
  }
}
