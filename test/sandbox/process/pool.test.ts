import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { dropIdleProcesses, setIdleKeepMs } from '../../../src/sandbox/process/pool.ts';
import { createSandbox, IsolateSandbox, prestartSandbox } from '../../../src/sandbox/session.ts';
import { childrenOf, gone } from '../../helpers/process.ts';

const open: IsolateSandbox[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.dispose();
  dropIdleProcesses();
});

describe('an isolate process started ahead of a session', () => {
  it('is the one the next session takes, and only one is started however often it is asked for', async () => {
    dropIdleProcesses();
    const pid = prestartSandbox();
    expect(prestartSandbox()).toBe(pid);
    const sandbox = (await createSandbox({ context: 'the text' })) as IsolateSandbox;
    open.push(sandbox);
    const r = await sandbox.run('print(context.length)');
    expect(r.stdout).toBe('8\n');
    expect(sandbox.pid).toBe(pid);
  });
});

describe('idle isolate processes', () => {
  it('are killed once no session has started for a while', async () => {
    dropIdleProcesses();
    const before = setIdleKeepMs(300);
    onTestFinished(() => {
      setIdleKeepMs(before);
    });
    const sandbox = (await createSandbox({ context: 'the text' })) as IsolateSandbox;
    const pid = sandbox.pid!;
    expect((await sandbox.run('print(context.length)')).stdout).toBe('8\n');
    sandbox.dispose();
    // The process went back idle, with a spare started beside it; both go when the pool sits unused.
    await gone(pid);
    await expect.poll(() => childrenOf(process.pid).length, { timeout: 10_000 }).toBe(0);
  });

  it('a session given up while its process starts kills that process instead of keeping it', async () => {
    dropIdleProcesses();
    const sandbox = new IsolateSandbox({ context: 'the text' });
    const starting = sandbox.start().catch((e: unknown) => e);
    // The process is being started (none was idle).
    await expect.poll(() => childrenOf(process.pid).length).toBe(1);
    const [pid] = childrenOf(process.pid);
    sandbox.dispose();
    expect(String(await starting)).toMatch(/disposed/);
    // Killed now, not kept idle (where only the idle timeout, a minute, would end it).
    await expect.poll(() => childrenOf(process.pid).includes(pid!), { timeout: 5_000 }).toBe(false);
  });
});
