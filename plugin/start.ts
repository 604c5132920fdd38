/**
 * The plugin's second stage, run by plugin/launch.sh with a Node.js 24 or newer: `node start.ts ARGS...`
 * means `rlm ARGS...` from this copy of the repository, once its dependencies are in place.
 *
 * A plugin arrives as a copy of the repository's files: no build (bin/rlm.js then runs the TypeScript
 * sources, which Node 24 loads as they are) and maybe no node_modules (Claude Code runs `npm ci
 * --ignore-scripts` in the copy and gives it a minute; offline, or with another host, nobody has). So
 * the first start installs the locked packages when some are missing (the same `npm ci`, once: one
 * detached installer holds a lock folder, every other start waits for it or moves on), bundles the
 * sandbox prelude beside its sources (build-prelude.ts, as the tests do), and checks that rlm loads,
 * isolated-vm's native module included. A stamp (node_modules/.rlm-ready, keyed by the lockfile, the
 * prelude's sources and Node's ABI) makes later starts cost a few file reads.
 *
 * What the user sees: every step and failure is one line in rlm-hook.log; the MCP server answers the
 * host's first request with a line saying what is happening and what to do (at once while packages
 * download; after up to a third of Claude Code's connection timeout when only the last steps remain), which `claude mcp list` and
 * /mcp show; a hook never waits and never fails (a session-end import is handed to a process that runs
 * it once the install is done).
 *
 * The store is $RLM_STORE when set, else ~/.rlm/claude: the one store the server, the hooks and the
 * session-start context share.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { refuseMcp, servesStdio } from '../bin/lib/mcp-refuse.js';
import { processAlive as alive } from '../core/process.ts';
import { shellQuote } from '../core/shell.ts';
import { note, readHookInput } from '../src/claude/hook-run.ts';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SELF = fileURLToPath(import.meta.url);
const BIN = path.join(ROOT, 'bin', 'rlm.js');
const MODULES = path.join(ROOT, 'node_modules');
const STAMP = path.join(MODULES, '.rlm-ready');
const LOCK = path.join(ROOT, '.rlm-install.lock');
const STATUS = path.join(ROOT, '.rlm-install.json');
const HOME = process.env.HOME || homedir();
const LOG = path.join(process.env.CLAUDE_CONFIG_DIR || path.join(HOME, '.claude'), 'rlm-hook.log');
/**
 * How long the MCP server waits for the last steps of an install (the packages in place) before
 * answering: a third of the time Claude Code gives a server to connect (MCP_TIMEOUT, default 30 s), since
 * on a busy machine its first request may come more than 10 s after the server started.
 */
const SERVE_WAIT_MS = Math.max(5_000, Math.floor((Number(process.env.MCP_TIMEOUT) || 30_000) / 3));
/** A hook does not start a new install within this time of a failed one. */
const RETRY_AFTER_MS = 10 * 60_000;
const INSTALL_TIMEOUT_MS = 15 * 60_000;
/** A lock folder younger than this without an owner yet is being taken, not abandoned. */
const LOCK_GRACE_MS = 30_000;
/**
 * The whole locked tree, as Claude Code's own plugin install runs it: the sandbox prelude is bundled by a
 * development dependency (rolldown), and a partial tree cannot have it (npm omits a dev dependency even
 * when named). Install scripts stay off: isolated-vm loads its prebuilt binary without them.
 */
const INSTALL_COMMAND = ['ci', '--ignore-scripts', '--no-audit', '--no-fund'];
const PRELUDE_DIR = path.join(ROOT, 'src', 'sandbox', 'prelude');
const PRELUDE_BUNDLE = path.join(PRELUDE_DIR, 'rlm-prelude.js');

interface Status {
  at: number;
  message: string;
}

type State = 'ready' | 'installing' | 'missing' | { failed: Status };

/**
 * What the stamp must say for the copy to count as prepared: the lockfile, the prelude's sources (a clone
 * used in place may change them), the Node ABI and the platform.
 */
function key(): string {
  const hash = createHash('sha256');
  const sources = readdirSync(PRELUDE_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => path.join(PRELUDE_DIR, f));
  for (const file of [
    path.join(ROOT, 'package-lock.json'),
    path.join(ROOT, 'build-prelude.ts'),
    ...sources,
  ]) {
    hash.update(`${path.relative(ROOT, file)}\0`);
    hash.update(read(file) ?? 'missing');
  }
  return `${hash.digest('hex')} abi ${process.versions.modules} ${process.platform}-${process.arch}\n`;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** True while an installer holds the lock (or is taking it). */
function installing(): boolean {
  const pid = Number(read(path.join(LOCK, 'pid')));
  if (pid > 0) return alive(pid);
  try {
    return Date.now() - statSync(LOCK).mtimeMs < LOCK_GRACE_MS;
  } catch {
    return false;
  }
}

function state(): State {
  if (read(STAMP) === key() && existsSync(PRELUDE_BUNDLE)) return 'ready';
  if (installing()) return 'installing';
  try {
    return { failed: JSON.parse(readFileSync(STATUS, 'utf8')) as Status };
  } catch {
    return 'missing';
  }
}

/** Which packages of the locked tree are missing, or undefined when none is. */
function missingPackages(): string | undefined {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  const missing = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter(
    (name) => !existsSync(path.join(MODULES, name, 'package.json')),
  );
  return missing.length > 0 ? `missing ${missing.join(', ')}` : undefined;
}

/**
 * Bundles the sandbox prelude beside its sources, then loads what rlm loads (the server, the prelude,
 * the native isolated-vm module) in a child that may crash. Undefined when all of it works: the stamp is
 * then written. Else what went wrong.
 */
function prepare(): string | undefined {
  const run = (args: string[], what: string) => {
    const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    return r.status === 0
      ? undefined
      : `${what}: ${errorLine(r.stderr ?? '') || `exit ${r.status ?? r.signal}`}`;
  };
  const built = run([path.join(ROOT, 'build-prelude.ts')], 'bundling the sandbox prelude failed');
  if (built !== undefined) return built;
  const url = (...p: string[]) => JSON.stringify(pathToFileURL(path.join(ROOT, ...p)).href);
  const probe =
    `import { createRequire } from 'node:module';` +
    `createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))})('isolated-vm');` +
    `await import(${url('src', 'mcp', 'server.ts')}); await import(${url('src', 'sandbox', 'prelude', 'index.ts')});`;
  const loaded = run(['--input-type=module', '-e', probe], 'rlm does not load');
  if (loaded !== undefined) return loaded;
  writeFileSync(STAMP, key());
  return undefined;
}

/** The line of a tool's output that says what went wrong. */
function errorLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return (lines.find((l) => /\b(error|ERR!|Cannot find)\b/i.test(l)) ?? lines.at(-1) ?? '').slice(0, 300);
}

/** Takes the install lock; false when a live installer holds it. */
function lock(): boolean {
  try {
    mkdirSync(LOCK);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (installing()) return false;
  // Abandoned by a killed installer: move it aside (one taker wins the rename), then take it.
  const stale = `${LOCK}.stale-${process.pid}`;
  try {
    renameSync(LOCK, stale);
    rmSync(stale, { recursive: true, force: true });
    mkdirSync(LOCK);
    return true;
  } catch {
    return false;
  }
}

/** Starts the detached installer unless one runs. False when the copy cannot be written. */
function startInstall(): boolean {
  try {
    if (!lock()) return true;
  } catch (err) {
    fail(`${ROOT} cannot be written (${(err as NodeJS.ErrnoException).code})`);
    return false;
  }
  rmSync(STATUS, { force: true });
  const child = spawn(process.execPath, [SELF, '--install'], { cwd: ROOT, detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  if (child.pid === undefined) {
    rmSync(LOCK, { recursive: true, force: true });
    return false;
  }
  writeFileSync(path.join(LOCK, 'pid'), String(child.pid));
  child.unref();
  return true;
}

/** The last failure this process saw, for when it could not even be recorded in the copy. */
let lastFailure: string | undefined;

function fail(reason: string): void {
  const message =
    `rlm could not install its dependencies: ${reason}. Fix: run \`cd ${shellQuote(ROOT)} && npm ${INSTALL_COMMAND.join(' ')}\` ` +
    `to see why, then reconnect (/mcp in Claude Code); details in ${LOG}`;
  lastFailure = message;
  note(LOG, `error: ${message}`);
  try {
    writeFileSync(STATUS, JSON.stringify({ at: Date.now(), message } satisfies Status));
  } catch {
    // a copy that cannot be written: the log and this process know
  }
}

/** The installer (`start.ts --install`, detached, holding the lock its parent took). */
async function install(): Promise<void> {
  const started = Date.now();
  try {
    let failure: string | undefined;
    if (missingPackages() !== undefined) {
      note(
        LOG,
        `rlm: installing its dependencies into ${MODULES} (npm ${INSTALL_COMMAND.join(' ')}; first start of this copy, a few minutes)`,
      );
      failure = await npm(INSTALL_COMMAND);
    }
    let problem = failure === undefined ? prepare() : undefined;
    if (problem !== undefined && /isolated.vm/i.test(problem)) {
      // No prebuilt binary for this platform: build it (needs a C++ toolchain and Python).
      note(LOG, `rlm: isolated-vm does not load (${problem}); building it with npm rebuild isolated-vm`);
      failure = await npm(['rebuild', 'isolated-vm']);
      problem = failure === undefined ? prepare() : undefined;
    }
    if (failure !== undefined || problem !== undefined) fail(failure ?? `after the install, ${problem}`);
    else note(LOG, `rlm: ready in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (err) {
    fail(String(err));
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Runs npm in the copy; undefined when it succeeds, else why not. The npm is $RLM_NPM when set, else the
 * one beside this Node, else the one on PATH.
 */
function npm(args: string[]): Promise<string | undefined> {
  const dir = path.dirname(process.execPath);
  const beside = path.join(dir, 'npm');
  const command = process.env.RLM_NPM || (existsSync(beside) ? beside : 'npm');
  return new Promise((resolve) => {
    // npm's own `#!/usr/bin/env node` then finds this Node first.
    const child = spawn(command, args, {
      cwd: ROOT,
      env: {
        ...process.env,
        PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}`,
        npm_config_update_notifier: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: INSTALL_TIMEOUT_MS,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) =>
      resolve(
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'npm was not found (it comes with Node.js: put it on PATH)'
          : `npm did not start: ${err.message}`,
      ),
    );
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(undefined);
      for (const line of output.trim().split('\n').slice(-8)) note(LOG, `npm: ${line}`);
      resolve(
        `npm ${args[0]} ${signal ? `was stopped (${signal})` : `exited ${code}`}: ${errorLine(output)}`,
      );
    });
  });
}

/** Polls until the dependencies are ready, an install failed, or `ms` passed. */
async function settle(ms: number): Promise<State> {
  const deadline = Date.now() + ms;
  for (;;) {
    const s = state();
    if (s !== 'installing' || Date.now() >= deadline) return s;
    await new Promise((done) => setTimeout(done, 250));
  }
}

const waitingLine = `rlm is installing its dependencies into ${MODULES} (first start of this copy; a few minutes). Reconnect when it is done (/mcp in Claude Code); progress in ${LOG}`;

function explain(s: State): string {
  if (typeof s === 'object') return s.failed.message;
  if (s === 'installing') return waitingLine;
  return lastFailure ?? `rlm's dependencies are missing and the install did not run; see ${LOG}`;
}

/** Runs rlm itself in this process. */
async function run(args: string[]): Promise<void> {
  // The copy runs from its TypeScript sources: keep what Node makes of them (types stripped, compiled)
  // so that a hook or the server starts about as fast as from a build. Children (the sandbox, the
  // hooks' background import) find the same cache through the variable.
  process.env.NODE_COMPILE_CACHE ||= path.join(MODULES, '.cache', 'rlm-compile');
  module.enableCompileCache(process.env.NODE_COMPILE_CACHE);
  process.argv = [process.execPath, BIN, ...args];
  await import(pathToFileURL(BIN).href);
}

/** A hook's work, once the install it waited for is done: the same command, fed the hook's input. */
function runLater(args: string[], input: string): void {
  const child = spawn(process.execPath, [SELF, '--after-install', ...args], {
    cwd: process.cwd(),
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, RLM_HOOK_INPUT: input },
  });
  child.on('error', (err) => note(LOG, `error: cannot start the import for later: ${err.message}`));
  child.unref();
}

async function main(args: string[]): Promise<void> {
  process.env.RLM_STORE ||= path.join(HOME, '.rlm', 'claude');
  if (args[0] === '--install') return install();
  if (args[0] === '--after-install') {
    if ((await settle(INSTALL_TIMEOUT_MS)) !== 'ready') return;
    const child = spawn(process.execPath, [BIN, ...args.slice(1)], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.stdin.end(process.env.RLM_HOOK_INPUT ?? '');
    return;
  }
  let s = state();
  // The packages are there (Claude Code's own install, or a clone): what is left takes seconds.
  if (s === 'missing' && missingPackages() === undefined && prepare() === undefined) s = 'ready';
  if (s === 'ready') return run(args);

  if (args.includes('--hook')) {
    // A hook neither waits nor fails. It starts the install unless one runs or failed a moment ago.
    if (s === 'missing' || (typeof s === 'object' && Date.now() - s.failed.at > RETRY_AFTER_MS))
      startInstall();
    if (args[0] === 'claude' && args[1] === 'ingest') {
      try {
        runLater(args, JSON.stringify(await readHookInput(process.stdin)));
      } catch (err) {
        note(LOG, `error: ${(err as Error).message}`);
      }
    }
    return;
  }
  // The server (or a person at a terminal): start or retry the install, and wait for it. The server
  // waits only for what takes seconds: packages to download take minutes and slow the machine down, so
  // then it answers almost at once (a failure that comes at once, like no npm, is still caught) rather
  // than let the host's connection time out. After a failed install it says why, and tries again.
  const serving = servesStdio(args);
  const previous = typeof s === 'object' ? s.failed.message : undefined;
  if (s !== 'installing') startInstall();
  if (serving && previous !== undefined) {
    await refuseMcp(`${previous}. Trying again now.`);
    process.exit(1);
  }
  if (!serving) process.stderr.write(`${waitingLine}\n`);
  const downloading = missingPackages() !== undefined;
  s = await settle(!serving ? INSTALL_TIMEOUT_MS : downloading ? 2_000 : SERVE_WAIT_MS);
  if (s === 'ready') return run(args);
  // Every explanation starts with "rlm ...": no prefix needed. Then exit at once: the host waits for a
  // refused server to end (Claude Code counts that wait against its connection timeout), and an open
  // stdin would keep this process alive.
  if (serving) await refuseMcp(explain(s));
  else process.stderr.write(`${explain(s)}\n`);
  process.exit(1);
}

await main(process.argv.slice(2));
