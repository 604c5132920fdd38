import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { acquireLock } from '../../memory/files/lock.ts';
import { StoreRegistry } from '../../src/mcp/stores.ts';

describe('StoreRegistry.discardIfEmpty', () => {
  it('removes a store a failed call created while it is empty, and keeps one that holds something', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'rlm-registry-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const stores = new StoreRegistry({}, root);
    onTestFinished(() => stores.close());
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
    const root = mkdtempSync(path.join(tmpdir(), 'rlm-registry-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const stores = new StoreRegistry({}, root);
    onTestFinished(() => stores.close());
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
