/**
 * A store the user may read but not write: every writing command says so in one line and exits 1; MCP
 * tools say the same in their error. Reads keep working. The commands run in a child process as a user
 * without write permission (as "nobody" when the tests run as root, whom permissions do not stop).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';

const launcher = fileURLToPath(new URL('../mcp/helpers/launch.ts', import.meta.url));
const asRoot = process.getuid?.() === 0;

/** Sets `mode` on `dir` and everything in it. */
function chmodTree(dir: string, dirMode: number, fileMode: number): void {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) chmodTree(full, dirMode, fileMode);
    else chmodSync(full, fileMode);
  }
  chmodSync(dir, dirMode);
}

/** A store with a document and a memory that only its owner may write. */
async function readOnlyStore(): Promise<{ root: string; store: string; doc: string }> {
  const root = mkdtempSync(path.join(tmpdir(), 'rlm-readonly-'));
  chmodSync(root, 0o755);
  const store = path.join(root, 'store');
  onTestFinished(() => {
    chmodTree(store, 0o755, 0o644);
    rmSync(root, { recursive: true, force: true });
  });
  const doc = path.join(root, 'a.md');
  writeFileSync(doc, '# Rivers\n\nThe river carries stones to the sea.\n');
  const s = await ChunkStore.open(store, { create: true });
  await s.ingestPaths([doc]);
  await s.remember({ text: 'A memory to keep.' });
  await s.close();
  chmodTree(store, 0o555, 0o444);
  chmodSync(doc, 0o644);
  return { root, store, doc };
}

/** Runs rlm in a child process as a user who cannot write the store. */
function rlm(args: string[], input?: string) {
  return spawnSync(process.execPath, [launcher, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: tmpdir() },
    ...(input === undefined ? {} : { input }),
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    timeout: 60_000,
  });
}

describe('a read-only store', () => {
  it('makes every writing command say so in one line, exit 1; reads still work', async () => {
    const { store, doc } = await readOnlyStore();
    // Every writer takes the store's lock first: these three take it three different ways.
    const writes = [['remember', 'another fact'], ['ingest', doc], ['repair']];
    for (const args of writes) {
      const r = rlm([...args, '--store', store]);
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(1);
      expect(r.stderr, args[0]).toBe(
        `rlm: the store ${store} is read-only for this user: writing needs write permission on that folder [ACCESS_DENIED]\n`,
      );
    }
    const read = rlm(['recall', 'memory to keep', '--store', store, '--json']);
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toContain('A memory to keep.');
  }, 120_000);

  it('makes an MCP tool that writes fail with the same message', async () => {
    const { store } = await readOnlyStore();
    const lines = [
      {
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ro', version: '0' } },
      },
      { method: 'notifications/initialized' },
      { id: 2, method: 'tools/call', params: { name: 'rlm_remember', arguments: { text: 'x', store } } },
    ]
      .map((m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`)
      .join('');
    const r = rlm(['serve'], lines);
    const reply = r.stdout
      .split('\n')
      .filter(Boolean)
      .map(
        (l) => JSON.parse(l) as { id?: number; result?: { isError?: boolean; content: { text: string }[] } },
      )
      .find((m) => m.id === 2);
    expect(reply?.result?.isError, r.stderr).toBe(true);
    expect(reply?.result?.content[0]?.text).toBe(
      `rlm_remember: the store ${store} is read-only for this user: writing needs write permission on that folder [ACCESS_DENIED]`,
    );
  }, 60_000);
});
