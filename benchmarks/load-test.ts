/**
 * Load test of several MCP servers on one store (`npm run bench -- postgres` runs it on PostgreSQL and
 * on a store folder): 3 `rlm serve --transport http` processes, `calls` concurrent tool calls (remember,
 * recall, search, grep, rlm_answer with a scripted model) spread over them, and one server killed with
 * SIGKILL when half the calls have been sent. Counts the calls that failed on a live server (should be
 * none) and the acknowledged memories missing afterwards (should be none).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readEnv } from '../core/env.ts';
import { openStore } from '../memory/open.ts';

const CLI = fileURLToPath(new URL('./cli-child.ts', import.meta.url));

export interface LoadTestResult {
  calls: number;
  /** Calls to a server that was alive when they ended, and how many of those failed. */
  liveCalls: number;
  liveFailures: number;
  /** Calls that were in flight on the killed server (they may fail: their server is gone). */
  killedCalls: number;
  acknowledgedMemories: number;
  lostMemories: number;
  /** Until every call ended, those on the killed server included (they may wait for a timeout). */
  wallMs: number;
  /** Calls answered by live servers per second, until the last of them ended. */
  throughput: number;
  /** Latency of the calls to live servers. */
  p50Ms: number;
  p95Ms: number;
}

function startServer(
  store: string,
  model: string,
  cwd: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      '--no-node-snapshot',
      CLI,
      'serve',
      '--transport',
      'http',
      '--port',
      '0',
      '--store',
      store,
      '--max-sessions',
      '200',
    ],
    { env: { PATH: readEnv().path, RLM_MODEL: model }, cwd, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString('utf8');
      const m = /MCP over HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', () => reject(new Error(`server exited: ${err}`)));
  });
}

/** Runs the load test against `store` (a folder or a URL; it must exist and hold some text to search). */
export async function loadTest(store: string, dir: string, calls = 300): Promise<LoadTestResult> {
  const rules = path.join(dir, 'load-model.json');
  writeFileSync(rules, JSON.stringify({ rules: [{ reply: 'FINAL(load test answer)' }] }));
  const servers = await Promise.all([0, 1, 2].map(() => startServer(store, `scripted:${rules}`, dir)));
  const alive = [true, true, true];
  const clients: Client[][] = [];
  // A few sessions per server, as several clients of a shared server would have.
  for (const s of servers) {
    const list: Client[] = [];
    for (let i = 0; i < 4; i++) {
      const c = new Client({ name: 'load', version: '0' });
      await c.connect(new StreamableHTTPClientTransport(new URL(s.url)));
      list.push(c);
    }
    clients.push(list);
  }
  const acknowledged: string[] = [];
  /** Latencies of the calls to live servers, and when the last of them ended. */
  const latencies: number[] = [];
  let lastLiveEnd = 0;
  let liveCalls = 0;
  let liveFailures = 0;
  let killedCalls = 0;
  const errors = new Map<string, number>();
  const note = (message: string) => errors.set(message, (errors.get(message) ?? 0) + 1);
  const started = performance.now();
  const one = async (i: number): Promise<void> => {
    const server = i % 3;
    const client = clients[server]![Math.floor(i / 3) % 4]!;
    const kind = i % 5;
    const t = performance.now();
    try {
      let r: { isError?: boolean; structuredContent?: unknown };
      if (kind === 0) {
        const text = `load test memory number ${i}`;
        r = (await client.callTool({ name: 'rlm_remember', arguments: { text, topic: 'load' } })) as typeof r;
        if (!r.isError) acknowledged.push(text);
      } else if (kind === 1)
        r = (await client.callTool({
          name: 'rlm_recall',
          arguments: { query: `memory number ${i - 1}` },
        })) as typeof r;
      else if (kind === 2)
        r = (await client.callTool({
          name: 'rlm_search',
          arguments: { query: 'time people world' },
        })) as typeof r;
      else if (kind === 3)
        r = (await client.callTool({
          name: 'rlm_grep',
          arguments: { pattern: 'govern\\w+', limit: 20 },
        })) as typeof r;
      else
        r = (await client.callTool({
          name: 'rlm_answer',
          arguments: { question: 'What is this about?' },
        })) as typeof r;
      if (alive[server]) {
        latencies.push(performance.now() - t);
        lastLiveEnd = performance.now();
        liveCalls++;
        if (r.isError) {
          liveFailures++;
          note(JSON.stringify((r as { content?: unknown }).content).slice(0, 200));
        }
      } else killedCalls++;
    } catch (err) {
      if (alive[server]) {
        note(String(err).slice(0, 200));
        latencies.push(performance.now() - t);
        lastLiveEnd = performance.now();
        liveCalls++;
        liveFailures++;
      } else killedCalls++;
    }
  };
  // All calls start at once; the third server dies by SIGKILL when half of them have ended.
  let ended = 0;
  await Promise.all(
    Array.from({ length: calls }, (_, i) =>
      one(i).then(() => {
        if (++ended === Math.floor(calls / 2)) {
          alive[2] = false;
          servers[2]!.child.kill('SIGKILL');
        }
      }),
    ),
  );
  const wallMs = performance.now() - started;
  for (const list of clients.slice(0, 2)) for (const c of list) await c.close().catch(() => undefined);
  for (const s of servers.slice(0, 2)) s.child.kill('SIGTERM');
  await Promise.all(
    servers.map((s) =>
      s.child.exitCode !== null || s.child.signalCode !== null
        ? undefined
        : new Promise((r) => s.child.once('exit', r)),
    ),
  );
  const check = await openStore(store);
  const remembered = new Set(
    (await check.listMemories({ topic: 'load', archived: true })).map((m) => m.text),
  );
  await check.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  for (const [message, n] of errors) process.stderr.write(`load test: ${n}× ${message}\n`);
  return {
    calls,
    liveCalls,
    liveFailures,
    killedCalls,
    acknowledgedMemories: acknowledged.length,
    lostMemories: acknowledged.filter((t) => !remembered.has(t)).length,
    wallMs,
    throughput: (liveCalls / Math.max(1, lastLiveEnd - started)) * 1000,
    p50Ms: sorted[Math.floor(sorted.length * 0.5)] ?? 0,
    p95Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0,
  };
}
