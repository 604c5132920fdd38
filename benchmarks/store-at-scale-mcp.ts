/**
 * The MCP server with a store open, as a client uses it: `rlm_peek` of chunks (their text and links),
 * `rlm_search`, and `rlm_search` of misspelt queries, through the SDK client over the in-memory
 * transport; p50 / p95 after a first call that opens the store. The links alone (`neighbors`) are timed
 * on a store open in this process. And `rlm_ingest` in an `rlm serve` of its own: its peak memory.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ChunkStore } from '../memory/files/store.ts';
import { createServer } from '../src/mcp/server.ts';
import { createServerContext } from '../src/mcp/server-context.ts';
import { Rng } from './rng.ts';
import { scaleQueries } from './scale-corpus.ts';
import { processRssMB, watchTreeMemory } from './tree-memory.ts';

const CALLS = 200;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

/** First call, then p50 / p95 of the rest, ms. */
async function timeCalls(
  n: number,
  call: (i: number) => Promise<unknown>,
): Promise<{ firstMs: number; p50: number; p95: number }> {
  let t = performance.now();
  await call(0);
  const firstMs = performance.now() - t;
  const times: number[] = [];
  for (let i = 1; i < n; i++) {
    t = performance.now();
    await call(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { firstMs, p50: percentile(times, 0.5), p95: percentile(times, 0.95) };
}

/** Chunk ids spread over the store, from its documents. */
async function chunkIds(store: string, n: number): Promise<string[]> {
  const opened = await ChunkStore.open(store);
  const docs = opened.documents();
  await opened.close();
  const rng = new Rng(5);
  return Array.from({ length: n }, () => {
    const d = docs[rng.int(0, docs.length - 1)]!;
    return `${d.id}:${rng.int(0, Math.max(0, d.chunks - 1))}`;
  });
}

export async function measureServer(store: string, prefix: string): Promise<Record<string, number>> {
  const ids = await chunkIds(store, CALLS);
  const ctx = createServerContext({ env: {}, log: () => {}, cwd: path.dirname(store) });
  const server = createServer(ctx);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'rlm-bench', version: '0' });
  await client.connect(clientSide);
  const call = (name: string, args: Record<string, unknown>) =>
    client.callTool({ name, arguments: { store, ...args } });
  const out: Record<string, number> = {};
  const put = (name: string, r: { firstMs: number; p50: number; p95: number }) => {
    out[`${prefix}.${name}.firstMs`] = r.firstMs;
    out[`${prefix}.${name}.p50`] = r.p50;
    out[`${prefix}.${name}.p95`] = r.p95;
  };
  try {
    put('peek', await timeCalls(CALLS, (i) => call('rlm_peek', { id: ids[i]! })));
    const queries = scaleQueries(CALLS);
    put('search', await timeCalls(CALLS, (i) => call('rlm_search', { query: queries[i]! })));
    const typos = scaleQueries(50, true);
    put('searchTypo', await timeCalls(typos.length, (i) => call('rlm_search', { query: typos[i]! })));
  } finally {
    await client.close();
    await server.close();
    await ctx.close();
  }
  const opened = await ChunkStore.open(store);
  try {
    put('links', await timeCalls(CALLS, async (i) => opened.neighbors(ids[i]!)));
  } finally {
    await opened.close();
  }
  const manifest = JSON.parse(readFileSync(path.join(store, 'rlm-store.json'), 'utf8')) as {
    segments: string[];
  };
  out[`${prefix}.segments`] = manifest.segments.length;
  return out;
}

/**
 * `rlm_ingest` of `from` into a fresh `store` by an `rlm serve` started for it, as a client starts one
 * (the compiled CLI over stdio, allowed the store's folder, which must hold `from` too): the call's wall
 * time, the server's own peak RSS, the largest RSS of any of its processes (the ingest runs in a child of
 * the server) and what the server still holds after the call (Linux: /proc; NaN elsewhere).
 */
export async function measureServerIngest(
  bin: string,
  from: string,
  store: string,
): Promise<{ ms: number; rssMB: number; serverMB: number; afterMB: number }> {
  rmSync(store, { recursive: true, force: true });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'serve', '--allow-path', path.dirname(store)],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'rlm-bench', version: '0' });
  await client.connect(transport);
  try {
    const watch = transport.pid === null ? null : watchTreeMemory(transport.pid);
    const t = performance.now();
    const r = await client.callTool({ name: 'rlm_ingest', arguments: { paths: [from], store } }, undefined, {
      timeout: 30 * 60_000,
    });
    const ms = performance.now() - t;
    const tree = await watch?.();
    if (r.isError) throw new Error(`rlm_ingest failed: ${JSON.stringify(r.content).slice(0, 500)}`);
    const memory =
      transport.pid === null ? { peakMB: Number.NaN, nowMB: Number.NaN } : processRssMB(transport.pid);
    return {
      ms,
      rssMB: Math.max(tree?.largestMB ?? Number.NaN, memory.peakMB),
      serverMB: memory.peakMB,
      afterMB: memory.nowMB,
    };
  } finally {
    await client.close();
    rmSync(store, { recursive: true, force: true });
  }
}
