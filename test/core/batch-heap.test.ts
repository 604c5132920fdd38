import { setFlagsFromString } from 'node:v8';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { heapTuned, keepHeapNearLiveSet } from '../../core/batch-heap.ts';

// The flags are recorded, not set: V8's flags are the whole test process's.
vi.mock('node:v8', async (original) => ({
  ...(await original<typeof import('node:v8')>()),
  setFlagsFromString: vi.fn(),
}));
const flags = vi.mocked(setFlagsFromString);

beforeEach(() => {
  flags.mockClear();
});

describe('keepHeapNearLiveSet', () => {
  it('holds the tuning while any batch runs and gives it back when the last ends', () => {
    expect(heapTuned()).toBe(false);
    const first = keepHeapNearLiveSet();
    const second = keepHeapNearLiveSet();
    expect(heapTuned()).toBe(true);
    // Set once, by the first batch.
    expect(flags.mock.calls.filter(([f]) => f === '--heap-growing-percent=10')).toHaveLength(1);
    first();
    // Ending the same batch twice must not end the other one.
    first();
    expect(heapTuned()).toBe(true);
    expect(flags.mock.calls.map(([f]) => f)).not.toContain('--heap-growing-percent=0');
    second();
    expect(heapTuned()).toBe(false);
    second();
    expect(heapTuned()).toBe(false);
  });

  it("gives V8's defaults back after the last batch of a server", () => {
    const settled = keepHeapNearLiveSet();
    flags.mockClear();
    settled();
    expect(flags.mock.calls.map(([f]) => f)).toEqual([
      '--semi-space-growth-factor=1',
      '--heap-growing-percent=0',
      '--semi-space-growth-factor=2',
    ]);
  });

  it('leaves the young generation stopped after the last batch of a command about to exit', () => {
    const settled = keepHeapNearLiveSet({ after: 'stopped' });
    expect(flags.mock.calls.map(([f]) => f)).toContain('--heap-growing-percent=10');
    flags.mockClear();
    settled();
    expect(flags.mock.calls.map(([f]) => f)).toEqual(['--semi-space-growth-factor=1']);
    expect(heapTuned()).toBe(false);
  });

  it('takes the growth step a batch asks for, the first of overlapping batches setting it', () => {
    const copy = keepHeapNearLiveSet({ growthPercent: 50 });
    const ingest = keepHeapNearLiveSet();
    const steps = flags.mock.calls.map(([f]) => f).filter((f) => f.startsWith('--heap-growing-percent='));
    expect(steps).toEqual(['--heap-growing-percent=50']);
    ingest();
    copy();
    expect(heapTuned()).toBe(false);
  });
});
