import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { acquireLock } from '../../memory/files/lock.ts';
import { StoreRegistry } from '../../src/mcp/stores.ts';

/** A registry over a new folder, both gone when the test ends. */
function registry(): { root: string; stores: StoreRegistry } {
  const root = mkdtempSync(path.join(tmpdir(), 'rlm-registry-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const stores = new StoreRegistry({}, root);
  onTestFinished(() => stores.close());
  return { root, stores };
}

describe('StoreRegistry.discardIfEmpty', () => {
  it('removes a store a failed call created while it is empty, and keeps one that holds something', async () => {
    const { root, stores } = registry();
    await stores.get('empty', { create: true });
    await stores.discardIfEmpty('empty');
    expect(existsSync(path.join(root, 'empty'))).toBe(false);
    expect(stores.dirs).toEqual([]);

    const kept = await stores.get('kept', { create: true });
    await kept.remember({ text: 'stays' });
    await stores.discardIfEmpty('kept');
    expect(existsSync(path.join(root, 'kept', 'rlm-store.json'))).toBe(true);
    // A later call opens it afresh.
    expect((await (await stores.get('kept')).listMemories()).map((m) => m.text)).toEqual(['stays']);
  });
});

describe('StoreRegistry stores', () => {
  it('wait for another process holding a folder store’s lock longer than the CLI does (its 10 s)', async () => {
    const { root, stores } = registry();
    const store = await stores.get('s', { create: true });
    // As an rlm_ingest's child process (or a terminal's rlm ingest) holds it for its whole run.
    const held = await acquireLock(path.join(root, 's'), { command: 'ingest' });
    const started = Date.now();
    const remembered = store.remember({ text: 'written once the ingest is done' });
    await sleep(11_000);
    await held.release();
    expect((await remembered).text).toBe('written once the ingest is done');
    expect(Date.now() - started).toBeGreaterThanOrEqual(11_000);
  }, 30_000);
});

describe('StoreRegistry.get', () => {
  it('creates a store for a call that creates, even while a read of it (which finds none) is in flight', async () => {
    const { root, stores } = registry();
    const [read, write] = await Promise.allSettled([stores.get('new'), stores.get('new', { create: true })]);
    expect(read.status === 'rejected' && (read.reason as { code?: string }).code).toBe('STORE_MISSING');
    expect(write.status).toBe('fulfilled');
    expect(existsSync(path.join(root, 'new', 'rlm-store.json'))).toBe(true);
  });

  it('stores nothing for a write cancelled while it waits for another process’s lock', async () => {
    const { root, stores } = registry();
    const store = await stores.get('s', { create: true });
    const held = await acquireLock(path.join(root, 's'), { command: 'ingest' });
    const controller = new AbortController();
    const remembered = store
      .remember({ text: 'cancelled memo', signal: controller.signal })
      .catch((e: unknown) => e);
    await sleep(300);
    controller.abort();
    expect(await remembered).toMatchObject({ code: 'ABORTED' });
    await held.release();
    expect(await store.listMemories()).toEqual([]);
  });
});
