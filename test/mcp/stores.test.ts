import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
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
    expect((await stores.get('kept')).listMemories().map((m) => m.text)).toEqual(['stays']);
  });
});
