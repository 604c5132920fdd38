/**
 * A Claude Code plugin install, as Claude Code makes it, for tests: a copy of the repository's files
 * (what git tracks, plus new files not ignored: no node_modules, no dist/) in a temporary folder, a
 * temporary HOME, and a PATH that holds no `rlm` and starts with an older `node`.
 */
import { execFileSync, type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface PluginCopy {
  /** The temporary folder holding everything below. */
  dir: string;
  /** The plugin's copy (what `${CLAUDE_PLUGIN_ROOT}` names). */
  root: string;
  home: string;
  /** A project folder, where sessions run. */
  project: string;
  /** Holds the older `node` that comes first on PATH (and whatever else a test puts there). */
  bin: string;
  /** The environment Claude Code would give the server and the hooks. */
  env: Record<string, string>;
  /** Lines the fake older `node` was run with. */
  oldNodeCalls(): string[];
  remove(): Promise<void>;
}

/** Copies the plugin; `modules` links the repository's installed packages in as node_modules. */
export function copyPlugin(opts: { modules: boolean }): PluginCopy {
  const dir = mkdtempSync(path.join(tmpdir(), 'rlm-plugin-'));
  const root = path.join(dir, 'plugin-copy');
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  const bin = path.join(dir, 'bin');
  for (const d of [root, home, project, bin]) mkdirSync(d, { recursive: true });
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((f) => f !== '');
  for (const f of files) {
    try {
      cpSync(path.join(ROOT, f), path.join(root, f));
    } catch (err) {
      // a file deleted in the working tree but not yet in git's index
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  if (opts.modules) linkModules(root);
  // An older Node first on PATH: it answers version probes and records every call.
  const calls = path.join(dir, 'old-node-calls');
  writeExecutable(
    path.join(bin, 'node'),
    `#!/bin/sh\necho "$*" >> '${calls}'\ncase "$1" in --version) echo v20.11.1 ;; *) echo 20.11.1 ;; esac\n`,
  );
  return {
    dir,
    root,
    home,
    project,
    bin,
    env: { HOME: home, PATH: `${bin}${path.delimiter}/usr/bin${path.delimiter}/bin`, LANG: 'C.UTF-8' },
    oldNodeCalls: () => readLines(calls),
    async remove() {
      // A detached installer may still be at work (a test that failed early): let it finish first, or
      // it would write into the folder after it is gone.
      await waitFor(() => !existsSync(path.join(root, '.rlm-install.lock')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** node_modules in `root` whose entries link to the repository's installed packages. */
function linkModules(root: string): void {
  const modules = path.join(root, 'node_modules');
  mkdirSync(modules, { recursive: true });
  for (const name of readdirSync(path.join(ROOT, 'node_modules')))
    symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
}

/** Puts a Node 24 (the one running the tests) where nvm keeps its versions under `home`. */
export function installNvmNode(home: string): string {
  const dir = path.join(home, '.nvm', 'versions', 'node', `v${process.versions.node}`, 'bin');
  mkdirSync(dir, { recursive: true });
  symlinkSync(process.execPath, path.join(dir, 'node'));
  return path.join(dir, 'node');
}

export function writeExecutable(file: string, text: string): void {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

export function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
  } catch {
    return [];
  }
}

/** How the manifests name the plugin's folder; Claude Code replaces it before running anything. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: the manifests' own placeholder, not a template
export const ROOT_VAR = '${CLAUDE_PLUGIN_ROOT}';

function expand(text: string, root: string): string {
  return text.replaceAll(ROOT_VAR, root);
}

/** The copy's manifests: the MCP server's command and the hook commands by event. */
export function manifests(root: string): {
  server: { command: string; args: string[] };
  hooks: Record<string, string>;
} {
  const plugin = JSON.parse(readFileSync(path.join(root, '.claude-plugin', 'plugin.json'), 'utf8')) as {
    mcpServers: Record<string, { command: string; args: string[] }>;
  };
  const server = plugin.mcpServers.rlm!;
  const file = JSON.parse(readFileSync(path.join(root, 'hooks', 'hooks.json'), 'utf8')) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  const hooks: Record<string, string> = {};
  for (const [event, groups] of Object.entries(file.hooks))
    hooks[event] = expand(groups[0]!.hooks[0]!.command, root);
  return { server: { command: server.command, args: server.args.map((a) => expand(a, root)) }, hooks };
}

/** Runs a hook command as Claude Code does: through a shell, the event's JSON on stdin. */
export function runHook(
  copy: PluginCopy,
  command: string,
  input: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd: copy.project,
      env: { ...copy.env, CLAUDE_PLUGIN_ROOT: copy.root, CLAUDE_PROJECT_DIR: copy.project, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(input));
  });
}

/** Waits for `condition`, checking every 100 ms, up to `ms`; false if it never held. */
export async function waitFor(condition: () => boolean | Promise<boolean>, ms = 60_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** The shell's view: is there an `rlm` on this PATH? */
export function whichRlm(env: Record<string, string>): SpawnSyncReturns<string> {
  return spawnSync('sh', ['-c', 'command -v rlm'], { env, encoding: 'utf8' });
}
