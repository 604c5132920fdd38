import { describe, expect, it } from 'vitest';
import { isRlmError } from '../../core/errors.ts';
import { Semaphore } from '../../src/runtime/semaphore.ts';

describe('Semaphore', () => {
  it('grants permits in arrival order and never exceeds the bound', async () => {
    const sem = new Semaphore(2);
    const order: number[] = [];
    let held = 0;
    let peak = 0;
    await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => {
        const release = await sem.acquire();
        order.push(i);
        held++;
        peak = Math.max(peak, held);
        await new Promise((r) => setTimeout(r, 5));
        held--;
        release();
        release(); // a second release is ignored
      }),
    );
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    expect(sem.available).toBe(2);
  });

  it('drops a waiter whose signal fires', async () => {
    const sem = new Semaphore(1);
    const release = await sem.acquire();
    const ctl = new AbortController();
    const waiting = sem.acquire(ctl.signal);
    ctl.abort();
    expect(isRlmError(await waiting.catch((e: unknown) => e), 'ABORTED')).toBe(true);
    release();
    expect(sem.available).toBe(1);
  });
});
