import { afterEach, describe, expect, it } from 'vitest';
import { dropIdleProcesses } from '../../../src/sandbox/process/pool.ts';
import { createSandbox, type IsolateSandbox, prestartSandbox } from '../../../src/sandbox/session.ts';

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
