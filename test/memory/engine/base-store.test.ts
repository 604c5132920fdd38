/**
 * The write path's link window: kept warm across a run of writes, given back
 * {@link LINK_WINDOW_IDLE_MS} after the last one, and never what keeps a process alive.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LINK_WINDOW_IDLE_MS } from '../../../memory/engine/base-store.ts';
import { LinkWindow } from '../../../memory/engine/link-window.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';

const NOTE = 'the quokka migration plan moves the kelp ledger to the new harbour';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('the link window between writes', () => {
  it('is loaded once for a run of writes and again after the store was idle', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const load = vi.spyOn(LinkWindow, 'load');
    const store = new MemoryChunkStore();
    await store.ingestText('a', NOTE);
    await store.ingestText('b', `${NOTE} today`);
    expect(load).toHaveBeenCalledTimes(1);
    // Each write starts the idle time again.
    vi.advanceTimersByTime(LINK_WINDOW_IDLE_MS - 1);
    await store.ingestText('c', `${NOTE} tomorrow`);
    vi.advanceTimersByTime(LINK_WINDOW_IDLE_MS - 1);
    expect(vi.getTimerCount()).toBe(1);
    expect(load).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(vi.getTimerCount()).toBe(0);
    await store.ingestText('d', `${NOTE} next week`);
    expect(load).toHaveBeenCalledTimes(2);
    // The window read back from the store links the new note as the warm one does.
    const warm = new MemoryChunkStore();
    for (const [id, text] of [
      ['a', NOTE],
      ['b', `${NOTE} today`],
      ['c', `${NOTE} tomorrow`],
      ['d', `${NOTE} next week`],
    ] as const)
      await warm.ingestText(id, text);
    expect(load).toHaveBeenCalledTimes(3);
    const related = async (s: MemoryChunkStore) =>
      (await s.neighbors('d:0', 'related_to')).map((l) => `${l.from}>${l.to}`);
    expect((await related(store)).length).toBeGreaterThan(0);
    expect((await related(store)).sort()).toEqual((await related(warm)).sort());
    await warm.close();
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('is released by close', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const load = vi.spyOn(LinkWindow, 'load');
    const store = new MemoryChunkStore();
    await store.ingestText('a', NOTE);
    expect(vi.getTimerCount()).toBe(1);
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
    await store.ingestText('b', NOTE);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('is given back after a write that never got the lock, too', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = new MemoryChunkStore();
    await store.ingestText('a', NOTE);
    const persistence = (store as unknown as { persistence: { lock: () => Promise<unknown> } }).persistence;
    vi.spyOn(persistence, 'lock').mockRejectedValueOnce(new Error('locked by another writer'));
    await expect(store.ingestText('b', NOTE)).rejects.toThrow('locked by another writer');
    expect(vi.getTimerCount()).toBe(1);
    const load = vi.spyOn(LinkWindow, 'load');
    vi.advanceTimersByTime(LINK_WINDOW_IDLE_MS);
    await store.ingestText('c', NOTE);
    expect(load).toHaveBeenCalledTimes(1);
    await store.close();
  });

  it('does not keep the process alive while it waits', async () => {
    const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = refTimers();
    const store = new MemoryChunkStore();
    await store.ingestText('a', NOTE);
    expect(refTimers()).toBe(before);
    await store.close();
  });
});
