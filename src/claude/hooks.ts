/**
 * Installing the Claude Code hooks that keep the history store current: `SessionEnd` and `PreCompact`
 * run `rlm claude ingest --hook`, which reads the hook's JSON (with `transcript_path`) on stdin. The
 * settings file is edited in place: every other key and hook is kept, ours are recognised by their
 * command, and the file is replaced atomically.
 */
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { RlmError } from '../../core/errors.ts';
import { makeFolderSync } from '../../core/paths.ts';
import { shellQuote } from '../../core/shell.ts';
import { writeFileAtomic } from '../../memory/fsutil.ts';

/** The hook events that trigger an import. */
const HOOK_EVENTS = ['SessionEnd', 'PreCompact'] as const;
/** What marks a hook command as ours. */
const MARK = 'claude ingest --hook';

type Json = Record<string, unknown>;

/**
 * The hook command for a store and a log file. `rlm` is the shell text that starts rlm: absolute paths
 * of a Node and of rlm's bin, so that neither PATH nor the default `node` matter. The shell runs it in
 * the background and returns at once: Claude Code gives SessionEnd hooks 1.5 s when it exits, less than
 * a busy machine may need to start Node. The job reads the hook's input from the original stdin (fd 3:
 * a background job's own stdin is /dev/null). When even rlm cannot run (its Node or bin removed since),
 * what the shell says goes to the log with a line saying how to fix it; the hook itself always exits 0.
 */
export function hookCommand(store: string, log: string, rlm: string): string {
  const to = shellQuote(log);
  return (
    `exec 3<&0; { ${rlm} ${MARK} --store ${shellQuote(store)} --log ${to} <&3 2>>${to} || { s=$?; ` +
    `printf '%s error: the rlm hook could not start (exit %s); run rlm claude hooks install again\\n' ` +
    `"$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$s" >>${to}; }; } >/dev/null 2>&1 &`
  );
}

async function readSettings(file: string): Promise<Json> {
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new RlmError('BAD_INPUT', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code}`);
  }
  if (raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new RlmError('BAD_INPUT', `${file} is not valid JSON; fix it first (nothing was changed)`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RlmError('BAD_INPUT', `${file} does not hold a JSON object; nothing was changed`);
  return value as Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOurs(hook: unknown): boolean {
  return typeof hook === 'object' && hook !== null && String((hook as Json).command ?? '').includes(MARK);
}

/** The settings without our hooks; groups and events left empty by that are dropped. Counts what went. */
function withoutOurs(settings: Json): { settings: Json; removed: number } {
  const hooks = settings.hooks;
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) return { settings, removed: 0 };
  let removed = 0;
  const next: Json = {};
  for (const [event, groups] of Object.entries(hooks as Json)) {
    if (!Array.isArray(groups)) {
      next[event] = groups;
      continue;
    }
    const kept = groups.flatMap((g: unknown) => {
      if (typeof g !== 'object' || g === null || !Array.isArray((g as Json).hooks)) return [g];
      const list = (g as Json).hooks as unknown[];
      const rest = list.filter((h) => !isOurs(h));
      removed += list.length - rest.length;
      if (rest.length === list.length) return [g];
      return rest.length === 0 ? [] : [{ ...(g as Json), hooks: rest }];
    });
    if (kept.length > 0 || groups.length === 0) next[event] = kept;
  }
  const out = { ...settings };
  if (Object.keys(next).length > 0) out.hooks = next;
  else delete out.hooks;
  return { settings: out, removed };
}

/**
 * Writes the settings where they live: through a symlink (settings kept with one's dotfiles), keeping the
 * file's mode (its `env` may hold API keys); a new file is the user's alone.
 */
async function writeSettings(file: string, settings: Json): Promise<void> {
  const target = await fs.realpath(file).catch(() => file);
  const mode = await fs.stat(target).then(
    (s) => s.mode & 0o777,
    () => 0o600,
  );
  makeFolderSync(dirname(target));
  await writeFileAtomic(target, `${JSON.stringify(settings, null, 2)}\n`, mode);
}

/** Adds (or updates) our hooks in `file`. Running it twice leaves one hook per event. */
export async function installHooks(
  file: string,
  command: string,
): Promise<{ settings: string; events: string[]; command: string }> {
  const { settings } = withoutOurs(await readSettings(file));
  // An entry of the user's in a form Claude Code does not read is theirs to fix: replacing it would lose it.
  const malformed = (entry: string, what: string) =>
    new RlmError('BAD_INPUT', `${file}: ${entry} is not ${what}; fix it first (nothing was changed)`, {
      path: file,
      entry,
    });
  if (settings.hooks !== undefined && !isObject(settings.hooks)) throw malformed('"hooks"', 'an object');
  const hooks = { ...((settings.hooks as Json | undefined) ?? {}) };
  for (const event of HOOK_EVENTS)
    if (hooks[event] !== undefined && !Array.isArray(hooks[event]))
      throw malformed(`"hooks.${event}"`, 'a list of hook groups');
  for (const event of HOOK_EVENTS) {
    const groups = [...((hooks[event] as unknown[] | undefined) ?? [])];
    groups.push({ hooks: [{ type: 'command', command, timeout: 10 }] });
    hooks[event] = groups;
  }
  await writeSettings(file, { ...settings, hooks });
  return { settings: file, events: [...HOOK_EVENTS], command };
}

/** Removes our hooks from `file`, keeping everything else. */
export async function removeHooks(file: string): Promise<{ settings: string; removed: number }> {
  const before = await readSettings(file);
  const { settings, removed } = withoutOurs(before);
  if (removed > 0) await writeSettings(file, settings);
  return { settings: file, removed };
}
