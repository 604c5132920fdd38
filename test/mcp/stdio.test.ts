import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';
import { TOOL_NAMES } from '../../src/mcp/server.ts';
import { createServerContext } from '../../src/mcp/server-context.ts';
import { serveStdio } from '../../src/mcp/stdio.ts';
import { tempDir } from '../helpers/temp.ts';
import { textOf } from './helpers/connect.ts';
import { scripted } from './helpers/rules.ts';
import { StreamTransport } from './helpers/stream-transport.ts';

const dir = tempDir('rlm-mcp-stdio-');
const launcher = fileURLToPath(new URL('./helpers/launch.ts', import.meta.url));

beforeAll(async () => {
  const store = await ChunkStore.open(join(dir, 'S'), { create: true });
  await store.ingestText('memo', 'The rocket launch is planned for Tuesday at dawn.');
  await store.close();
});

/** JSON-RPC lines a client might pipe in without waiting for replies: the handshake, then `calls`. */
function pipedLines(calls: { id: number; method: string; params?: Record<string, unknown> }[]): string {
  const messages = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    ...calls.map((c) => ({ jsonrpc: '2.0', ...c })),
  ];
  return messages.map((m) => `${JSON.stringify(m)}\n`).join('');
}

const callTool = (id: number, name: string, args: Record<string, unknown>) => ({
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

interface Reply {
  id?: number;
  result?: {
    isError?: boolean;
    content?: unknown;
    structuredContent?: Record<string, unknown>;
    tools?: unknown[];
  };
  error?: unknown;
}

/** The responses among the lines a server wrote, by request id. */
function repliesIn(raw: string): Map<number, Reply> {
  const replies = new Map<number, Reply>();
  for (const line of raw.split('\n')) {
    if (line === '') continue;
    const m = JSON.parse(line) as Reply & { method?: string };
    if (m.method === undefined && typeof m.id === 'number') replies.set(m.id, m);
  }
  return replies;
}

/** Serves `input` piped in whole (stdin then ends) and returns all the server wrote once it is done. */
async function servePiped(ctx: ReturnType<typeof createServerContext>, input: string): Promise<string> {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  let raw = '';
  fromServer.on('data', (c: Buffer) => {
    raw += c.toString('utf8');
  });
  const served = serveStdio(ctx, { stdin: toServer, stdout: fromServer });
  toServer.end(input);
  await served;
  await ctx.close();
  return raw;
}

describe('serveStdio in process', () => {
  it('serves over the given streams and returns when input ends', async () => {
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const logs: string[] = [];
    const model = scripted(dir, 'inproc.json', [{ depth: 0, reply: 'FINAL(in process)' }]);
    const ctx = createServerContext({ env: { RLM_MODEL: model }, log: (l) => logs.push(l) });
    const served = serveStdio(ctx, { stdin: toServer, stdout: fromServer });
    const client = new Client({ name: 't', version: '0' });
    const transport = new StreamTransport(fromServer, toServer);
    await client.connect(transport);
    const r = (await client.callTool({
      name: 'rlm_answer',
      arguments: { question: 'q', context: 'c' },
    })) as CallToolResult;
    expect(r.structuredContent).toMatchObject({ answer: 'in process' });
    toServer.end();
    await served;
    await ctx.close();
    expect(logs.some((l) => l.startsWith('rlm serve: rlm_answer final'))).toBe(true);
  });

  it('answers every request already received when input ends right after them', async () => {
    const logs: string[] = [];
    const model = scripted(dir, 'drain.json', [{ depth: 0, reply: 'FINAL(late but whole)', delayMs: 200 }]);
    const ctx = createServerContext({ env: { RLM_MODEL: model }, cwd: dir, log: (l) => logs.push(l) });
    const raw = await servePiped(
      ctx,
      pipedLines([
        callTool(2, 'rlm_answer', { question: 'q', context: 'c' }),
        callTool(3, 'rlm_search', { query: 'rocket', store: 'S' }),
        { id: 4, method: 'tools/list' },
        { id: 5, method: 'no/such/method' },
      ]),
    );
    const replies = repliesIn(raw);
    expect([...replies.keys()].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(replies.get(2)?.result?.structuredContent).toMatchObject({
      answer: 'late but whole',
      status: 'final',
    });
    expect(replies.get(3)?.result?.structuredContent).toMatchObject({
      results: [expect.objectContaining({ document: 'memo' })],
    });
    expect(replies.get(4)?.result?.tools).toHaveLength(TOOL_NAMES.length);
    expect(replies.get(5)?.error).toMatchObject({ message: 'Method not found' });
    expect(logs.filter((l) => l.startsWith('rlm serve: rlm_answer'))).toEqual([
      expect.stringMatching(/^rlm serve: rlm_answer final/),
    ]);
  });

  it('answers a line that is not JSON, or not a JSON-RPC message, with JSON-RPC errors of id null', async () => {
    const logs: string[] = [];
    const ctx = createServerContext({ log: (l) => logs.push(l) });
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
    const raw = await servePiped(
      ctx,
      `${pipedLines([])}{"method": tools/list}\n{"hello": 1}\n[1,2]\n${ping}\n`,
    );
    const lines = raw
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const unknown = lines.filter((m) => m.id === null);
    const invalid = {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) },
    };
    expect(unknown).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } },
      invalid,
      invalid,
    ]);
    // The server goes on: the request after them is answered.
    expect([...repliesIn(raw).keys()].sort()).toEqual([1, 3]);
    // One line each in the log, not the SDK's dump of its schema check.
    expect(logs.filter((l) => l.startsWith('rlm serve:'))).toEqual([
      'rlm serve: a line on stdin was refused: Parse error: the line is not JSON',
      'rlm serve: a line on stdin was refused: Invalid Request: not a JSON-RPC 2.0 message',
      'rlm serve: a line on stdin was refused: Invalid Request: not a JSON-RPC 2.0 message',
    ]);
  });

  it('does not wait for a request the client cancelled', async () => {
    const logs: string[] = [];
    const model = scripted(dir, 'cancelled.json', [{ depth: 0, reply: 'FINAL("never")', delayMs: 60_000 }]);
    const ctx = createServerContext({ env: { RLM_MODEL: model }, log: (l) => logs.push(l) });
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } };
    const raw = await servePiped(
      ctx,
      `${pipedLines([callTool(2, 'rlm_answer', { question: 'q', context: 'c' }), { id: 3, method: 'ping' }])}${JSON.stringify(cancel)}\n`,
    );
    const replies = repliesIn(raw);
    expect([...replies.keys()].sort()).toEqual([1, 3]);
    expect(logs.some((l) => l.startsWith('rlm serve: rlm_answer aborted'))).toBe(true);
  });

  it('cancels in-flight calls when the parent process is gone', async () => {
    const model = scripted(dir, 'orphan.json', [{ depth: 0, reply: 'FINAL("never")', delayMs: 60_000 }]);
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    let aborted!: () => void;
    const done = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    const logs: string[] = [];
    const ctx = createServerContext({
      env: { RLM_MODEL: model },
      log: (l) => {
        logs.push(l);
        if (l.startsWith('rlm serve: rlm_answer aborted')) aborted();
      },
    });
    let ppid = 4242;
    const served = serveStdio(ctx, {
      stdin: toServer,
      stdout: fromServer,
      parentPid: () => ppid,
      parentCheckMs: 10,
    });
    const initialized = new Promise((resolve) => fromServer.once('data', resolve));
    // stdin stays open: a crashed parent need not close it.
    toServer.write(pipedLines([callTool(2, 'rlm_answer', { question: 'q', context: 'c' })]));
    await initialized;
    // Reparented: the client that started the server is gone.
    ppid = 1;
    await done;
    await served;
    await ctx.close();
    expect(logs).toContain('rlm serve: the parent process (4242) is gone; cancelling in-flight calls');
  });

  it('cancels in-flight calls instead when its signal fires or stdout fails after input ended', async () => {
    const model = scripted(dir, 'slow.json', [{ depth: 0, reply: 'FINAL("never")', delayMs: 60_000 }]);
    for (const how of ['signal', 'stdout'] as const) {
      const toServer = new PassThrough();
      const fromServer = new PassThrough();
      const logs: string[] = [];
      const ctx = createServerContext({ env: { RLM_MODEL: model }, log: (l) => logs.push(l) });
      const controller = new AbortController();
      const served = serveStdio(ctx, { stdin: toServer, stdout: fromServer, signal: controller.signal });
      const initialized = new Promise((resolve) => fromServer.once('data', resolve));
      toServer.end(pipedLines([callTool(2, 'rlm_answer', { question: 'q', context: 'c' })]));
      await initialized;
      if (how === 'signal') controller.abort();
      else fromServer.destroy(new Error('EPIPE'));
      await served;
      await ctx.close();
      expect(
        logs.some((l) => l.startsWith('rlm serve: rlm_answer aborted')),
        how,
      ).toBe(true);
      if (how === 'stdout')
        expect(logs).toContain('rlm serve: stdout failed (EPIPE); cancelling in-flight calls');
    }
  });

  it('stops when its signal fires', async () => {
    const ctx = createServerContext({ env: {}, log: () => {} });
    const controller = new AbortController();
    const served = serveStdio(ctx, {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      signal: controller.signal,
    });
    controller.abort();
    await expect(served).resolves.toBeUndefined();
    await ctx.close();
  });
});

describe('rlm serve as a subprocess over stdio', () => {
  it('answers, reports errors as tool results, keeps stdout for JSON-RPC and exits 0 when stdin closes', async () => {
    const model = scripted(dir, 'child.json', [
      { depth: 0, match: 'life', reply: 'FINAL(42)' },
      { depth: 0, reply: 'FINAL("other")' },
    ]);
    const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(
      process.execPath,
      ['--no-node-snapshot', launcher, 'serve'],
      { env: { PATH: process.env.PATH, RLM_MODEL: model }, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const transport = new StreamTransport(child.stdout, child.stdin);
    const errors: Error[] = [];
    const client = new Client({ name: 'rlm-test', version: '0' });
    client.onerror = (e) => errors.push(e);
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(TOOL_NAMES.length);

      const ok = (await client.callTool({
        name: 'rlm_answer',
        arguments: { question: 'What is the meaning of life?', context: 'Deep Thought computed 42.' },
      })) as CallToolResult;
      expect(ok.isError).toBeFalsy();
      expect(ok.structuredContent).toMatchObject({ answer: '42', status: 'final' });

      const bad = (await client.callTool({
        name: 'rlm_answer',
        arguments: { question: 'q', context: 'c', model: 'anthropic:claude-sonnet-4-5' },
      })) as CallToolResult;
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toContain('ANTHROPIC_API_KEY is not set');

      const status = (await client.callTool({ name: 'rlm_status', arguments: {} })) as CallToolResult;
      expect(status.structuredContent).toMatchObject({ defaults: { model } });
    } finally {
      child.stdin.end();
    }
    expect(await exited).toBe(0);
    expect(errors).toEqual([]);
    const lines = transport.raw.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(stderr).toMatch(/rlm serve: rlm_answer final after 1 iteration/);
  });

  it('answers requests piped in ahead of end of input before exiting 0', async () => {
    const model = scripted(dir, 'piped.json', [{ depth: 0, reply: 'FINAL("piped")', delayMs: 300 }]);
    const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(
      process.execPath,
      ['--no-node-snapshot', launcher, 'serve', '--store', 'S'],
      { env: { PATH: process.env.PATH, RLM_MODEL: model }, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Like `printf '...' | rlm serve`: everything at once, then end of input without waiting for replies.
    child.stdin.end(
      pipedLines([
        callTool(2, 'rlm_search', { query: 'rocket launch' }),
        callTool(3, 'rlm_answer', { question: 'q', context: 'c' }),
      ]),
    );
    expect(await exited, stderr).toBe(0);
    const replies = repliesIn(stdout);
    expect([...replies.keys()].sort()).toEqual([1, 2, 3]);
    expect(replies.get(2)?.result?.structuredContent).toMatchObject({
      results: [expect.objectContaining({ document: 'memo' })],
    });
    expect(replies.get(3)?.result?.structuredContent).toMatchObject({ answer: 'piped', status: 'final' });
    expect(stderr).toMatch(/rlm serve: rlm_answer final after 1 iteration/);
    expect(stderr).not.toMatch(/aborted/);
  });

  it('fences reads with --allow-path from a subprocess', async () => {
    const model = scripted(dir, 'fenced.json', [{ depth: 0, reply: 'FINAL("read")' }]);
    mkdirSync(join(dir, 'open'), { recursive: true });
    writeFileSync(join(dir, 'open', 'a.txt'), 'fine');
    writeFileSync(join(dir, 'open', 'big.txt'), 'x'.repeat(1024 * 1024));
    writeFileSync(join(dir, 'closed.txt'), 'not for you');
    const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(
      process.execPath,
      ['--no-node-snapshot', launcher, 'serve', '--allow-path', 'open', '--max-paths-mb', '1'],
      { env: { PATH: process.env.PATH, RLM_MODEL: model }, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.end(
      pipedLines([
        callTool(2, 'rlm_answer', { question: 'q', paths: ['open/a.txt'] }),
        callTool(3, 'rlm_answer', { question: 'q', paths: ['closed.txt'] }),
        callTool(4, 'rlm_answer', { question: 'q', paths: ['open'] }),
      ]),
    );
    expect(await exited).toBe(0);
    const replies = repliesIn(stdout);
    expect(replies.get(2)?.result?.structuredContent).toMatchObject({ answer: 'read' });
    expect(replies.get(3)?.result?.isError).toBe(true);
    expect(JSON.stringify(replies.get(3)?.result?.content)).toContain(
      `closed.txt (${join(dir, 'closed.txt')}) is outside the folders this server may read (${join(dir, 'open')})`,
    );
    expect(JSON.stringify(replies.get(4)?.result?.content)).toContain('paths hold more than 1 MiB of files');
  });
});
