/**
 * The Claude Code plugin as Claude Code runs it: from a copy of the repository in a temporary folder,
 * with a temporary HOME, no `rlm` on PATH and an older `node` first on it. The server is started exactly
 * as .claude-plugin/plugin.json says and reached with the MCP SDK's client; the hooks run exactly as
 * hooks/hooks.json says, through a shell, with the event's JSON on stdin.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { sessionText, writeSession } from '../../benchmarks/claude-corpus.ts';
import { ChunkStore } from '../../memory/files/store.ts';
import { countTokens } from '../../memory/ingest/tokens.ts';
import { repl, scripted } from '../mcp/helpers/rules.ts';
import {
  copyPlugin,
  installNvmNode,
  manifests,
  type PluginCopy,
  ROOT,
  readLines,
  runHook,
  waitFor,
  whichRlm,
  writeExecutable,
} from './helpers.ts';

/** Connects the SDK's client to the server started as the plugin starts it. */
async function connect(copy: PluginCopy, env: Record<string, string> = {}) {
  const { server } = manifests(copy.root);
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    cwd: copy.project,
    env: { ...copy.env, CLAUDE_PLUGIN_ROOT: copy.root, CLAUDE_PROJECT_DIR: copy.project, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const client = new Client({ name: 'plugin-test', version: '0' });
  onTestFinished(() => client.close());
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
}

/** The error the client gets when the server refuses to start. */
async function refusal(copy: PluginCopy, env: Record<string, string> = {}): Promise<string> {
  const err = await connect(copy, env).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (err === undefined) throw new Error('the server started');
  return err.message;
}

/**
 * Starts the server as the plugin does, sends Claude Code's `server/discover` probe then `initialize` and
 * keeps stdin open, as a host does; resolves with the server's exit code and the replies once it exits (a
 * refusing server must end by itself: hosts wait for it).
 */
function refuseAndExit(
  copy: PluginCopy,
  env: Record<string, string>,
): Promise<{ code: number | null; replies: unknown[] }> {
  const { server } = manifests(copy.root);
  return new Promise((resolve, reject) => {
    const child = spawn(server.command, server.args, {
      cwd: copy.project,
      env: { ...copy.env, CLAUDE_PLUGIN_ROOT: copy.root, ...env },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    onTestFinished(() => {
      child.kill();
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) =>
      resolve({
        code,
        replies: stdout
          .trim()
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as unknown),
      }),
    );
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: {} })}\n`,
    );
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'initialize', params: {} })}\n`);
  });
}

/**
 * The server refuses as {@link refuseAndExit} starts it: exit 1, and `message` as the error of Claude
 * Code's `server/discover` probe and of the `initialize` after it.
 */
async function expectRefused(copy: PluginCopy, env: Record<string, string>, message: string): Promise<void> {
  const raw = await refuseAndExit(copy, env);
  expect(raw.code).toBe(1);
  expect(raw.replies).toEqual(
    ['probe', 7].map((id) => ({ jsonrpc: '2.0', id, error: { code: -32603, message } })),
  );
}

const LOG = (copy: PluginCopy) => path.join(copy.home, '.claude', 'rlm-hook.log');
const STORE = (copy: PluginCopy) => path.join(copy.home, '.rlm', 'claude');

async function sessions(store: string): Promise<number> {
  if (!existsSync(path.join(store, 'rlm-store.json'))) return 0;
  const s = await ChunkStore.open(store);
  try {
    return s.documents().filter((d) => d.meta?.source === 'claude-code').length;
  } finally {
    await s.close();
  }
}

describe('the plugin, installed as a copy with its dependencies in place', { timeout: 120_000 }, () => {
  let copy: PluginCopy;
  beforeAll(() => {
    copy = copyPlugin({ modules: true });
    installNvmNode(copy.home);
  });
  afterAll(() => copy.remove(), 120_000);

  it('has no rlm on PATH and an older node first, which it only asks for its version', () => {
    expect(whichRlm(copy.env).status).not.toBe(0);
    expect(existsSync(path.join(copy.root, 'dist'))).toBe(false);
  });

  it('starts the MCP server as plugin.json says; the store is ~/.rlm/claude; answers in its sandbox', async () => {
    // A scripted model writes a repl block: the sandbox runs it from the copy's sources and its prelude.
    const model = scripted(copy.dir, 'answer.json', [
      { depth: 0, match: 'How long', reply: repl('FINAL(String(context.length))') },
    ]);
    const { client, call } = await connect(copy, { RLM_MODEL: model });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['rlm_answer', 'rlm_remember', 'rlm_recall', 'rlm_status']));
    const remembered = await call('rlm_remember', {
      text: 'Releases are cut from the main branch on Tuesdays.',
      topic: 'release',
      importance: 'high',
      tags: [`project:${copy.project}`],
    });
    expect(remembered.isError).toBeFalsy();
    const status = (await call('rlm_status', {})).structuredContent as {
      workingFolder: string;
      defaults: { store: string };
      store: { dir: string; memories: { memories: number } };
    };
    expect(status.workingFolder).toBe(copy.project);
    expect(status.defaults.store).toBe(STORE(copy));
    expect(status.store).toMatchObject({ dir: STORE(copy), memories: { memories: 1 } });
    const answer = await call('rlm_answer', {
      question: 'How long is the context?',
      context: 'twelve chars',
    });
    expect(answer.structuredContent).toMatchObject({ answer: '12', status: 'final' });
    for (const call of copy.oldNodeCalls()) expect(call).toMatch(/^(-e process\.stdout\.write|--version)/);
  });

  it('imports a session when it ends, and tells the next session what it remembers', async () => {
    const { hooks } = manifests(copy.root);
    expect(hooks.PreCompact).toBe(hooks.SessionEnd);
    const transcript = writeSession(path.join(copy.home, '.claude', 'projects'), copy.project, {
      session: 'sess-1',
      cwd: copy.project,
      summary: 'Speed up the image build',
      exchanges: [
        {
          user: 'The image build takes ten minutes',
          assistant: 'Cache the dependency layer first.',
          time: '2026-03-02T09:00:00.000Z',
        },
      ],
    });
    const runs = path.join(transcript.replace(/\.jsonl$/, ''), 'subagents');
    mkdirSync(runs, { recursive: true });
    writeFileSync(
      path.join(runs, 'agent-42.jsonl'),
      sessionText({
        session: 'sess-1',
        cwd: copy.project,
        exchanges: [
          { user: 'Find the Dockerfile', assistant: 'docker/Dockerfile', time: '2026-03-02T09:01:00.000Z' },
        ],
      }),
    );
    const end = await runHook(copy, hooks.SessionEnd!, {
      session_id: 'sess-1',
      transcript_path: transcript,
      cwd: copy.project,
      hook_event_name: 'SessionEnd',
      reason: 'exit',
    });
    expect(end).toEqual({ code: 0, stdout: '', stderr: '' });
    // The session and its subagent run.
    expect(await waitFor(async () => (await sessions(STORE(copy))) === 2)).toBe(true);

    const start = await runHook(copy, hooks.SessionStart!, {
      session_id: 'sess-2',
      cwd: copy.project,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    expect(start.code).toBe(0);
    expect(start.stderr).toBe('');
    expect(start.stdout).toMatch(/^## What rlm remembers about this project \(/);
    expect(start.stdout).toContain('] Releases are cut from the main branch on Tuesdays. (mem-');
    expect(start.stdout).toContain(' · 1 exchange · Speed up the image build\n');
    expect(countTokens(start.stdout)).toBeLessThanOrEqual(600);
    expect(existsSync(LOG(copy))).toBe(false);

    // A transcript_path that is not one of Claude Code's sessions: one line in the log, nothing stored.
    const wrong = await runHook(copy, hooks.SessionEnd!, {
      session_id: 'x',
      transcript_path: '/etc/passwd',
      cwd: copy.project,
      hook_event_name: 'SessionEnd',
    });
    expect(wrong).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await waitFor(() => readLines(LOG(copy)).length > 0)).toBe(true);
    expect(readLines(LOG(copy))).toEqual([
      expect.stringMatching(/^\S+Z error: transcript_path \/etc\/passwd is not in .*\/\.claude\/projects, /),
    ]);
    expect(await sessions(STORE(copy))).toBe(2);
  });

  it('keeps the session-start context within RLM_CONTEXT_TOKENS, this project first, over a seeded store', async () => {
    const store = await ChunkStore.open(STORE(copy), { create: true });
    try {
      await store.rememberMany([
        ...Array.from({ length: 40 }, (_, i) => ({
          text: `Project fact number ${i}: the service ${i} listens on port ${8000 + i}.`,
          topic: 'ports',
          tags: [`project:${copy.project}`],
        })),
        ...Array.from({ length: 10 }, (_, i) => ({ text: `General preference ${i}.`, topic: 'style' })),
        { text: 'Another project deploys with Helm.', topic: 'deploy', tags: ['project:/srv/elsewhere'] },
      ]);
    } finally {
      await store.close();
    }
    const { hooks } = manifests(copy.root);
    const input = {
      session_id: 'sess-3',
      cwd: copy.project,
      hook_event_name: 'SessionStart',
      source: 'startup',
    };
    for (const budget of [150, 400]) {
      const r = await runHook(copy, hooks.SessionStart!, input, { RLM_CONTEXT_TOKENS: String(budget) });
      expect(r.code).toBe(0);
      const tokens = countTokens(r.stdout);
      expect(tokens, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(tokens).toBeGreaterThan(budget / 2);
      expect(r.stdout).toContain('Releases are cut from the main branch');
      expect(r.stdout).not.toContain('Helm');
      expect(r.stdout).not.toContain('General preference');
    }
    const wide = await runHook(copy, hooks.SessionStart!, input, { RLM_CONTEXT_TOKENS: '3000' });
    expect(wide.stdout.indexOf('Project fact number')).toBeLessThan(
      wide.stdout.indexOf('General preference'),
    );
    expect(wide.stdout).not.toContain('Helm');
  });
});

describe('the plugin without a Node 24', { timeout: 120_000 }, () => {
  let copy: PluginCopy;
  beforeAll(() => {
    copy = copyPlugin({ modules: true });
  });
  afterAll(() => copy.remove(), 120_000);

  it('says so in one line, with the fix: in the MCP status and in the hook log', async () => {
    // RLM_NODE names the only Node to consider, so no Node on this machine interferes.
    const env = { RLM_NODE: path.join(copy.bin, 'node') };
    const message = await refusal(copy, env);
    expect(message).toBe(
      `MCP error -32603: rlm needs Node.js 24 or newer and found Node.js v20.11.1 (${copy.bin}/node), named by ` +
        'RLM_NODE. Fix: install Node 24 (e.g. nvm install 24) or set RLM_NODE to a Node 24 binary, then restart Claude Code.',
    );
    const { hooks } = manifests(copy.root);
    for (const event of ['SessionStart', 'SessionEnd']) {
      const r = await runHook(
        copy,
        hooks[event]!,
        { session_id: 's', cwd: copy.project, transcript_path: '/x' },
        env,
      );
      expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    // Claude Code probes with server/discover before initialize: both get the line.
    await expectRefused(copy, env, message.slice('MCP error -32603: '.length));
    // The two servers and the two hooks each leave the line in the log (the session-end hook returns at
    // once and works in the background: wait for its line).
    expect(await waitFor(() => readLines(LOG(copy)).length === 4)).toBe(true);
    const lines = readLines(LOG(copy));
    for (const line of lines)
      expect(line).toMatch(/^\S+Z error: rlm needs Node\.js 24 or newer and found Node\.js v20\.11\.1 /);
  });
});

describe('the plugin without its dependencies', { timeout: 120_000 }, () => {
  let copy: PluginCopy;
  beforeAll(() => {
    copy = copyPlugin({ modules: false });
    installNvmNode(copy.home);
  });
  afterAll(() => copy.remove(), 120_000);

  it('installs them once, under a lock, saying what it does; the server says so, hooks move on', async () => {
    // A stand-in for npm: records its call, waits for the test's go, then puts the packages in place.
    const calls = path.join(copy.dir, 'npm-calls');
    const go = path.join(copy.dir, 'npm-go');
    const npm = path.join(copy.bin, 'fake-npm');
    writeExecutable(
      npm,
      // Waits at most a minute, so that a test that fails before its go leaves no process behind.
      `#!/bin/sh\necho "$*" >> '${calls}'\nn=0; while [ ! -e '${go}' ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\n` +
        `mkdir -p node_modules && for e in '${path.join(ROOT, 'node_modules')}'/*; do ln -s "$e" node_modules/; done\n`,
    );
    const env = { RLM_NPM: npm };
    const { hooks } = manifests(copy.root);
    const transcript = writeSession(path.join(copy.home, '.claude', 'projects'), copy.project, {
      session: 'sess-early',
      cwd: copy.project,
      summary: 'Ended while rlm was installing',
      exchanges: [{ user: 'hello', assistant: 'hi', time: '2026-03-01T09:00:00.000Z' }],
    });
    // The first session start begins the install and moves on; so does the session end, whose import
    // waits for the install.
    const start = await runHook(copy, hooks.SessionStart!, { session_id: 'a', cwd: copy.project }, env);
    expect(start).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await waitFor(() => readLines(calls).length === 1)).toBe(true);
    const end = await runHook(
      copy,
      hooks.SessionEnd!,
      { session_id: 'sess-early', transcript_path: transcript, cwd: copy.project },
      env,
    );
    expect(end).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await sessions(STORE(copy))).toBe(0);
    expect(readLines(LOG(copy))[0]).toMatch(
      /^\S+ rlm: installing its dependencies into .*\/node_modules \(npm ci --ignore-scripts --no-audit --no-fund; first start/,
    );
    // While packages download, the server says so at once (a download outlasts the host's connection
    // timeout), without starting another install.
    expect(await refusal(copy, env)).toBe(
      `MCP error -32603: rlm is installing its dependencies into ${copy.root}/node_modules (first start of ` +
        `this copy; a few minutes). Reconnect when it is done (/mcp in Claude Code); progress in ${LOG(copy)}`,
    );
    writeExecutable(go, '');
    expect(await waitFor(() => readLines(LOG(copy)).some((l) => / rlm: ready in \d+ s$/.test(l)))).toBe(true);
    const { call } = await connect(copy, env);
    expect((await call('rlm_status', {})).isError).toBeFalsy();
    expect(readLines(calls)).toEqual(['ci --ignore-scripts --no-audit --no-fund']);
    // The hook log says why, should the import that waited for the install not come.
    const imported = await waitFor(async () => (await sessions(STORE(copy))) === 1);
    expect(imported, readFileSync(LOG(copy), 'utf8')).toBe(true);
    expect(readFileSync(path.join(copy.root, 'node_modules', '.rlm-ready'), 'utf8')).toContain(
      `abi ${process.versions.modules}`,
    );
    expect(existsSync(path.join(copy.root, '.rlm-install.lock'))).toBe(false);
    // Installed: the next session starts with what was imported.
    const next = await runHook(copy, hooks.SessionStart!, { session_id: 'b', cwd: copy.project }, env);
    expect(next.stdout).toContain('Ended while rlm was installing');
  });
});

describe('the plugin when its dependencies cannot be installed', { timeout: 120_000 }, () => {
  let copy: PluginCopy;
  beforeAll(() => {
    copy = copyPlugin({ modules: false });
    installNvmNode(copy.home);
  });
  afterAll(() => copy.remove(), 120_000);

  it('says why in one line, with the command that shows more, and tries again; hooks still exit 0', async () => {
    const npm = path.join(copy.bin, 'failing-npm');
    writeExecutable(
      npm,
      '#!/bin/sh\necho "npm error code ENOTFOUND" >&2\necho "npm error network request to https://registry.npmjs.org/zod failed" >&2\nexit 1\n',
    );
    const env = { RLM_NPM: npm };
    const why =
      'rlm could not install its dependencies: npm ci exited 1: npm error code ENOTFOUND. Fix: run ' +
      `\`cd ${copy.root} && npm ci --ignore-scripts --no-audit --no-fund\` to see why, then reconnect ` +
      `(/mcp in Claude Code); details in ${LOG(copy)}`;
    // A session start begins the install, which fails: the hook log says why.
    const { hooks } = manifests(copy.root);
    const r = await runHook(copy, hooks.SessionStart!, { session_id: 'a', cwd: copy.project }, env);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await waitFor(() => readLines(LOG(copy)).some((l) => l.endsWith(`error: ${why}`)))).toBe(true);
    expect(
      readLines(LOG(copy)).some((l) =>
        l.endsWith('npm: npm error network request to https://registry.npmjs.org/zod failed'),
      ),
    ).toBe(true);
    // The server then says why in the host's status, and tries again.
    const lock = path.join(copy.root, '.rlm-install.lock');
    expect(await waitFor(() => !existsSync(lock))).toBe(true);
    expect(await refusal(copy, env)).toBe(`MCP error -32603: ${why}. Trying again now.`);
    // It ends by itself once it has answered, though its stdin stays open.
    expect(await waitFor(() => !existsSync(lock))).toBe(true);
    await expectRefused(copy, env, `${why}. Trying again now.`);
    expect(await waitFor(() => !existsSync(lock))).toBe(true);
    expect(readLines(LOG(copy)).filter((l) => l.endsWith(`error: ${why}`))).toHaveLength(3);
  });
});
