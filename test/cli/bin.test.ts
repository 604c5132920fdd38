import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { writeSession } from '../../benchmarks/claude-corpus.ts';
import { tempDir } from '../helpers/temp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/rlm.js', import.meta.url));

/**
 * `rlm claude recall QUERY` over a store a background import fills, once its output holds `text` and the
 * import has let go of the store (the test's timeout is the hang detector).
 */
async function recalled(store: string, query: string, text: string): Promise<string> {
  let out = '';
  while (!out.includes(text) || existsSync(join(store, 'write.lock'))) {
    await new Promise((done) => setTimeout(done, 200));
    if (existsSync(join(store, 'rlm-store.json')))
      out = spawnSync(process.execPath, [BIN, 'claude', 'recall', query, '--store', store], {
        encoding: 'utf8',
      }).stdout;
  }
  return out;
}

describe('the rlm bin', () => {
  beforeAll(() => {
    // The bin runs the compiled dist/, as an installed package does; build it from the current sources.
    execFileSync(process.execPath, [join(ROOT, 'build.mjs')], { cwd: ROOT, stdio: 'pipe' });
  });

  it('starts Node from its startup snapshot, and still runs blocks: isolates run in child processes that have the flag', () => {
    // No --no-node-snapshot on the bin's own Node (it would start slower)...
    expect(readFileSync(BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
    // ...and isolated-vm, which refuses to create isolates in a process started from the snapshot, runs a
    // block: the sandbox starts its isolate processes with the flag.
    const dir = tempDir('rlm-bin-exec-');
    writeFileSync(join(dir, 'block.js'), 'print(6 * 7)');
    const r = spawnSync(BIN, ['exec', join(dir, 'block.js'), '--json'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, stdout: '42\n' });
  });

  it('runs the README main command from the compiled package', () => {
    const r = spawnSync(
      BIN,
      [
        'answer',
        'Which schema version does the store use?',
        '--context',
        'memory/SCHEMA.md',
        '--model',
        'scripted:examples/schema-version.json',
        '--json',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ answer: '3', status: 'final' });
  });

  it('prints its version and exits 2 on an unknown command', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(spawnSync(BIN, ['--version'], { encoding: 'utf8' }).stdout).toBe(`${pkg.version}\n`);
    const bad = spawnSync(BIN, ['frobnicate'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown command 'frobnicate'");
  });

  it('runs `rlm bench` from the compiled package (its suites ship in dist/benchmarks)', () => {
    const r = spawnSync(BIN, ['bench', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: rlm bench');
  });

  it('resolves every subpath export to the compiled package', () => {
    const script = `
      const root = await import('rlm');
      const memory = await import('rlm/memory');
      const sandbox = await import('rlm/sandbox');
      const mcp = await import('rlm/mcp');
      console.log([typeof root.RLM, typeof memory.ChunkStore, typeof sandbox.createSandbox, typeof mcp.createServer].join(' '));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('function function function function\n');
  });

  it('on an older Node prints one line saying what to do, before loading anything', () => {
    // Pretend to be Node 20; with the real Node 20 the compiled code would die on new regex syntax.
    const fake =
      'data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"20.11.1"}})';
    const r = spawnSync(process.execPath, ['--import', fake, BIN, 'search', 'x'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^rlm: needs Node\.js 24 or newer, but this is Node\.js 20\.11\.1 .*nvm install 24/,
    );
  });
  it('on an older Node, `rlm serve` answers the MCP host with that line, where the host shows it', () => {
    const fake =
      'data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"20.11.1"}})';
    // Claude Code sends a server/discover probe before initialize: both get the line, and nothing after.
    const requests = [
      { jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: {} },
      { jsonrpc: '2.0', method: 'notifications/ping' },
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: {} },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    ];
    const r = spawnSync(process.execPath, ['--import', fake, BIN, 'serve'], {
      input: requests.map((m) => `${JSON.stringify(m)}\n`).join(''),
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    const replies = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number | string; error: { code: number; message: string } });
    expect(replies.map((m) => m.id)).toEqual(['probe', 0]);
    expect(replies[0]).toEqual(replies[1] && { ...replies[1], id: 'probe' });
    const reply = replies[1]!;
    expect(reply).toMatchObject({ id: 0, error: { code: -32603 } });
    expect(reply.error.message).toMatch(
      /^rlm: needs Node\.js 24 or newer, but this is Node\.js 20\.11\.1 .*nvm install 24/,
    );
    expect(r.stderr).toBe(`${reply.error.message}\n`);
  });

  it('keeps the young generation from growing for ingest, repair, claude ingest and store copy only', () => {
    const dir = tempDir('rlm-bin-young-');
    writeFileSync(join(dir, 'a.md'), '# A\n\nriver stone garden\n');
    // At exit, allocate objects that survive (which makes V8 grow the young generation when it may)
    // and report the young generation's size. V8 sizes the young generation from the machine's memory
    // (up to 64 MiB semi-spaces on a large one, too little to grow on a small one): the flags fix its
    // bounds, so what is measured is whether the command lets it grow, not the machine. A command that
    // lets it grow reaches the bound (V8 reports both semi-spaces: twice --max-semi-space-size); one that
    // stops it stays at or near 8 MiB, give or take a page (8.25 MiB was seen once), far below.
    const MAX_SEMI_MIB = 16;
    const probe =
      'data:text/javascript,import v8 from "node:v8";process.on("exit",()=>{const keep=[];' +
      'for(let r=0;r<8;r++){const a=[];for(let i=0;i<5e5;i++)a.push({i});keep.push(a)}' +
      'const s=v8.getHeapSpaceStatistics().find((x)=>x.space_name==="new_space");' +
      'process.stderr.write("young "+s.space_size+"\\n")})';
    const young = (args: string[]) => {
      const bounds = ['--min-semi-space-size=1', `--max-semi-space-size=${MAX_SEMI_MIB}`];
      const r = spawnSync(
        process.execPath,
        ['--no-node-snapshot', ...bounds, '--import', probe, BIN, ...args],
        {
          encoding: 'utf8',
        },
      );
      expect(r.status, r.stderr).toBe(0);
      const m = /^young (\d+)$/m.exec(r.stderr);
      expect(r.stderr + r.stdout).not.toContain('unrecognized flag');
      return Number(m?.[1]) / 2 ** 20;
    };
    const store = join(dir, 'store');
    expect(young(['ingest', join(dir, 'a.md'), '--store', store])).toBeLessThan(MAX_SEMI_MIB);
    expect(young(['repair', '--store', store])).toBeLessThan(MAX_SEMI_MIB);
    expect(young(['store', 'copy', store, join(dir, 'copy')])).toBeLessThan(MAX_SEMI_MIB);
    expect(young(['store', 'copy', '--help'])).toBeLessThan(MAX_SEMI_MIB);
    expect(young(['search', 'river', '--store', store])).toBeGreaterThanOrEqual(2 * MAX_SEMI_MIB);
    const sessions = join(dir, 'projects');
    writeSession(sessions, '/home/x/proj', {
      session: 's1',
      cwd: '/home/x/proj',
      exchanges: [
        { user: 'how do we deploy', assistant: 'with the vault token', time: '2026-01-01T00:00:00Z' },
      ],
    });
    const claudeStore = join(dir, 'claude-store');
    expect(young(['claude', 'ingest', '--dir', sessions, '--store', claudeStore])).toBeLessThan(MAX_SEMI_MIB);
    expect(young(['claude', 'projects', '--store', claudeStore])).toBeGreaterThanOrEqual(2 * MAX_SEMI_MIB);
  });

  it('runs the Claude Code hook from the compiled package: silent, exit 0, imported in the background', async () => {
    const dir = tempDir('rlm-bin-hook-');
    const file = writeSession(join(dir, 'projects'), '/home/x/proj', {
      session: 's1',
      cwd: '/home/x/proj',
      exchanges: [
        { user: 'how do we deploy', assistant: 'with the vault token', time: '2026-01-01T00:00:00Z' },
      ],
    });
    const store = join(dir, 'store');
    const r = spawnSync(
      BIN,
      ['claude', 'ingest', '--hook', '--store', store, '--log', join(dir, 'hook.log')],
      {
        // The hook takes sessions from Claude Code's projects folder only: this test's.
        env: { ...process.env, CLAUDE_CONFIG_DIR: dir },
        input: JSON.stringify({ transcript_path: file, hook_event_name: 'SessionEnd' }),
        encoding: 'utf8',
      },
    );
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    // The background import is done once its session can be recalled and it has let go of the store.
    let out = '';
    while (!out.includes('vault token') || existsSync(join(store, 'write.lock'))) {
      if (existsSync(join(dir, 'hook.log'))) break; // it failed: the assertions below say how
      await new Promise((done) => setTimeout(done, 200));
      if (existsSync(join(store, 'rlm-store.json')))
        out = spawnSync(BIN, ['claude', 'recall', 'deploy', '--store', store], { encoding: 'utf8' }).stdout;
    }
    expect(out).toContain('User: how do we deploy');
    expect(existsSync(join(dir, 'hook.log'))).toBe(false);
  });
});

describe('hooks written by `rlm claude hooks install`', () => {
  it('run with no rlm on PATH and an older node first: the paths are absolute; a broken one is logged', async () => {
    const dir = tempDir('rlm-bin-hooks-');
    const bin = join(dir, 'bin');
    const calls = join(dir, 'old-node-calls');
    mkdirSync(bin);
    writeFileSync(join(bin, 'node'), `#!/bin/sh\necho "$*" >> '${calls}'\necho v20.11.1\n`, { mode: 0o755 });
    // Claude Code's folder is the test's: the hook takes sessions from its projects folder only.
    const env = { HOME: dir, PATH: `${bin}:/usr/bin:/bin`, CLAUDE_CONFIG_DIR: dir };
    expect(spawnSync('sh', ['-c', 'command -v rlm'], { env }).status).not.toBe(0);
    const settings = join(dir, 'settings.json');
    const store = join(dir, 'store');
    const log = join(dir, 'rlm-hook.log');
    const installed = spawnSync(
      process.execPath,
      [BIN, 'claude', 'hooks', 'install', '--settings', settings, '--store', store, '--log', log],
      { encoding: 'utf8' },
    );
    expect(installed.status).toBe(0);
    const command = (
      JSON.parse(readFileSync(settings, 'utf8')) as {
        hooks: { SessionEnd: { hooks: { command: string }[] }[] };
      }
    ).hooks.SessionEnd[0]!.hooks[0]!.command;
    expect(command.startsWith(`exec 3<&0; { ${process.execPath} ${BIN} claude ingest --hook `)).toBe(true);
    expect(installed.stdout).toContain(`\n  ${command}\n`);
    const file = writeSession(join(dir, 'projects'), '/home/x/proj', {
      session: 's1',
      cwd: '/home/x/proj',
      exchanges: [{ user: 'where are the keys', assistant: 'in the vault', time: '2026-01-01T00:00:00Z' }],
    });
    const hook = spawnSync('sh', ['-c', command], {
      env,
      input: JSON.stringify({ transcript_path: file }),
      encoding: 'utf8',
    });
    expect([hook.status, hook.stdout, hook.stderr]).toEqual([0, '', '']);
    const out = await recalled(store, 'keys', 'in the vault');
    expect(out).toContain('User: where are the keys');
    expect(existsSync(calls) ? readFileSync(calls, 'utf8') : '').toBe('');
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('');
    // The Node or the bin removed since: the hook still exits 0, and the log says what happened and what to do.
    const broken = command.replace(process.execPath, join(dir, 'gone', 'node'));
    const again = spawnSync('sh', ['-c', broken], { env, input: '{}', encoding: 'utf8' });
    expect([again.status, again.stdout, again.stderr]).toEqual([0, '', '']);
    // The hook returned at once; its background job writes the log.
    let lines: string[] = [];
    while (lines.length < 2) {
      await new Promise((done) => setTimeout(done, 100));
      lines = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
    }
    expect(lines[0]).toContain(`${join(dir, 'gone', 'node')}: not found`);
    expect(lines[1]).toMatch(
      /^\S+Z error: the rlm hook could not start \(exit 127\); run rlm claude hooks install again$/,
    );
  });
});

describe('the npm tarball', () => {
  it('installed in an empty folder, runs `npx rlm --version`, `npx rlm exec` and `npx rlm serve`', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rlm-pack-'));
    // A busy machine takes a while to stop npx's process tree and remove an installed package.
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }), 120_000);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    // dist/ was just built from these sources (beforeAll above); `npm pack` would build it again.
    const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const [{ filename, files }] = JSON.parse(packed) as [{ filename: string; files: { path: string }[] }];
    const shipped = files.map((f) => f.path);
    expect(shipped).toEqual(
      expect.arrayContaining([
        'bin/rlm.js',
        'bin/lib/mcp-refuse.js',
        'dist/src/cli/main.js',
        'dist/src/sandbox/prelude/rlm-prelude.js',
      ]),
    );
    expect(
      shipped.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('plugin/')),
    ).toEqual([]);
    const app = join(dir, 'app');
    mkdirSync(app);
    execFileSync(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', join(dir, filename)],
      {
        cwd: app,
        stdio: 'pipe',
      },
    );
    const npx = (args: string[], input?: string) =>
      spawnSync('npx', ['--no-install', 'rlm', ...args], {
        cwd: app,
        encoding: 'utf8',
        ...(input === undefined ? {} : { input }),
      });
    expect(npx(['--version']).stdout).toBe(`${pkg.version}\n`);
    const exec = npx(['exec', '-', '--json'], 'print(6 * 7)');
    expect(JSON.parse(exec.stdout)).toMatchObject({ ok: true, stdout: '42\n' });
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['--no-install', 'rlm', 'serve'],
      cwd: app,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'pack-test', version: '0' });
    onTestFinished(() => client.close(), 120_000);
    await client.connect(transport);
    expect(client.getServerVersion()).toMatchObject({ name: 'rlm', version: pkg.version });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('rlm_answer');
  }, 300_000);
});

describe('the published package', () => {
  it('has an MIT LICENSE matching package.json and ships no source maps to unshipped sources', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      license: string;
    };
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(new URL('../../LICENSE', import.meta.url), 'utf8')).toMatch(/^MIT License\n/);
    const build = JSON.parse(readFileSync(new URL('../../tsconfig.build.json', import.meta.url), 'utf8')) as {
      compilerOptions: { sourceMap?: boolean; declarationMap?: boolean };
    };
    expect(build.compilerOptions.sourceMap).toBe(false);
    expect(build.compilerOptions.declarationMap ?? false).toBe(false);
  });
});
