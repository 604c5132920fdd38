/** `rlm claude hooks install|remove`: the Claude Code hooks that run `rlm claude ingest` (src/claude/hooks.ts). */

import path from 'node:path';
import { readEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { shellQuote } from '../../../core/shell.ts';
import { isPostgresUrl, redactIn } from '../../../memory/postgres/url.ts';
import { hookCommand, installHooks, removeHooks } from '../../claude/hooks.ts';
import { parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, writeJson } from '../io.ts';
import { selfCommand } from '../self.ts';
import { storeDir } from '../store-arg.ts';

const HELP = `usage: rlm claude hooks install --store DIR [--settings FILE] [--log FILE] [--rlm CMD] [--json]
       rlm claude hooks remove [--settings FILE] [--json]

install adds SessionEnd and PreCompact hooks to Claude Code's settings (default
$CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json) that run rlm claude ingest --hook
--store DIR --log FILE, started as NODE BIN claude ingest ...,
which reads the session path from the hook's input and imports it in the background: the hook returns
at once, prints nothing and never fails; problems go to the log (default rlm-hook.log beside the
settings), also when the hook cannot start at all. NODE and BIN are the absolute paths of the Node running
this command and of this rlm's bin, so the hooks need neither rlm on PATH nor a recent default node; the
command is printed. --rlm CMD replaces "NODE BIN" with your own shell command. Installing again replaces
rlm's hooks; other settings and hooks are kept; the file is replaced atomically. remove takes rlm's
hooks out. --store falls back to $RLM_STORE. --json prints {settings, events, command} (install) or
{settings, removed}.
`;

export async function hooks(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    settings: { type: 'string' },
    store: { type: 'string' },
    log: { type: 'string' },
    rlm: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [action, ...extra] = positionals;
  if (values.help || action === undefined) {
    io.stdout.write(HELP);
    return values.help ? EXIT_OK : 2;
  }
  if (extra.length > 0) throw new RlmError('BAD_INPUT', `claude hooks: unexpected argument '${extra[0]}'`);
  const config = readEnv(io.env).claudeConfigDir;
  const settings = path.resolve(io.cwd, values.settings ?? path.join(config, 'settings.json'));
  if (action === 'install') {
    // storeDir resolves a folder against the working directory and keeps a URL as it is.
    const store = storeDir(values.store, io);
    const log = path.resolve(io.cwd, values.log ?? path.join(path.dirname(settings), 'rlm-hook.log'));
    const launcher = values.rlm ?? selfCommand().map(shellQuote).join(' ');
    const installed = await installHooks(settings, hookCommand(store, log, launcher));
    // The settings file holds the URL whole (the hook needs it); what is printed hides its password.
    const r = isPostgresUrl(store)
      ? { ...installed, command: redactIn(installed.command, store) }
      : installed;
    if (values.json) writeJson(io, r);
    else
      io.stdout.write(
        `installed ${r.events.join(' and ')} ${r.events.length === 1 ? 'hook' : 'hooks'} in ${r.settings}:\n  ${r.command}\n`,
      );
    return EXIT_OK;
  }
  if (action === 'remove') {
    const r = await removeHooks(settings);
    if (values.json) writeJson(io, r);
    else
      io.stdout.write(
        r.removed > 0
          ? `removed ${plural(r.removed, 'rlm hook')} from ${r.settings}\n`
          : `no rlm hooks in ${r.settings}\n`,
      );
    return EXIT_OK;
  }
  throw new RlmError('BAD_INPUT', `claude hooks: expected install or remove, got '${action}'`);
}
