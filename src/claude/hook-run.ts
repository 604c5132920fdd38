/**
 * The foreground half of `rlm claude ingest --hook`: reads the hook's JSON from stdin, starts the import
 * in a detached process (hook-worker) and returns at once. It never throws: Claude Code must not be
 * slowed down or see a failure, so every problem goes to the log file.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, realpathSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processEnv } from '../../core/env.ts';
import { inside, makeFolderSync } from '../../core/paths.ts';
import { isPostgresUrl } from '../../memory/postgres/url.ts';

/** Bytes of hook input read at most, and how long to wait for it. */
const MAX_INPUT = 1 << 20;
const INPUT_WAIT_MS = 3000;

/**
 * Starts the background import of the session named on stdin, which must lie in `projects` (Claude Code's
 * projects folder, where it keeps every session). Resolves when the worker is started.
 */
export async function startHookImport(
  stdin: NodeJS.ReadableStream,
  store: string,
  log: string,
  cwd: string,
  projects: string,
): Promise<void> {
  try {
    const input = await readHookInput(stdin);
    const path = input.transcript_path;
    if (typeof path !== 'string' || path === '') throw new Error('hook input has no transcript_path');
    const file = isAbsolute(path) ? path : resolve(typeof input.cwd === 'string' ? input.cwd : cwd, path);
    // Real paths, so that neither a symlinked ~/.claude is refused nor a link in projects/ to a file
    // elsewhere followed. A transcript that does not exist yet is left to the worker, which says so.
    if (!inside(realOr(file), realOr(projects)))
      throw new Error(
        `transcript_path ${file} is not in ${projects}, where Claude Code keeps sessions; not imported`,
      );
    const worker = fileURLToPath(
      new URL(`./hook-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
    );
    // A PostgreSQL URL is no path to resolve, and goes in the environment (RLM_STORE), where `ps` does
    // not show its password; a folder is resolved against the session's folder.
    const url = isPostgresUrl(store);
    const child = spawn(process.execPath, [worker, file, url ? '-' : resolve(cwd, store), log], {
      detached: true,
      stdio: 'ignore',
      cwd,
      ...(url ? { env: { ...processEnv(), RLM_STORE: store } } : {}),
    });
    child.on('error', (err) => note(log, `error: cannot start the import: ${err.message}`));
    child.unref();
  } catch (err) {
    note(log, `error: ${(err as Error).message}`);
  }
}

/** The real path of `path`, or of its folder when it does not exist (yet). */
function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realOr(parent), basename(path));
  }
}

/** The hook's JSON input from stdin (Claude Code sends one object: session_id, transcript_path, cwd...). */
export async function readHookInput(stdin: NodeJS.ReadableStream): Promise<Record<string, unknown>> {
  const value: unknown = JSON.parse(await readInput(stdin));
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('hook input is not a JSON object');
  return value as Record<string, unknown>;
}

/**
 * Appends a timestamped line to the hook log (a multi-line message folded into one); never throws, since
 * a hook stays silent whatever happens.
 */
export function note(log: string, line: string): void {
  try {
    makeFolderSync(dirname(log));
    appendFileSync(log, `${new Date().toISOString()} ${line.replace(/\s*\n\s*/g, ' ')}\n`);
  } catch {
    // the hook stays silent whatever happens
  }
}

/**
 * The hook input's text: up to the end of stdin, or as soon as it is one whole JSON object (a host that
 * keeps stdin open after writing must not hold the hook), or the failure after INPUT_WAIT_MS. Reading
 * stops there: stdin is let go of, so the process can exit whatever the other end does.
 */
function readInput(stdin: NodeJS.ReadableStream): Promise<string> {
  return new Promise((done, fail) => {
    let text = '';
    const timer = setTimeout(() => finish(() => fail(new Error('no hook input on stdin'))), INPUT_WAIT_MS);
    const finish = (then: () => void) => {
      clearTimeout(timer);
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onError);
      stdin.pause();
      (stdin as { destroy?: () => void }).destroy?.();
      then();
    };
    const onData = (chunk: Buffer | string) => {
      text += String(chunk);
      if (text.length > MAX_INPUT) finish(() => fail(new Error('hook input is too large')));
      else if (wholeObject(text)) finish(() => done(text));
    };
    const onEnd = () => finish(() => done(text));
    const onError = (err: Error) => finish(() => fail(err));
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.on('error', onError);
  });
}

/** Whether `text` is one whole JSON object already (more may never come). */
function wholeObject(text: string): boolean {
  if (!text.trimEnd().endsWith('}')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
