// Child process: takes a store's write lock with every write of the lock's contents slowed down by
// 1.5 s (as a process descheduled at the worst moment would be), holds it until its input ends, and
// releases it.
//   slow-lock-child.ts DIR
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const pause = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
const writeSync = fs.writeSync;
const writeFileSync = fs.writeFileSync;
// biome-ignore lint/suspicious/noExplicitAny: a pass-through patch of overloaded functions
(fs as any).writeSync = (...args: any[]) => {
  if (String(args[1]).includes('slow-writer')) pause();
  return (writeSync as (...a: unknown[]) => number)(...args);
};
// biome-ignore lint/suspicious/noExplicitAny: as above
(fs as any).writeFileSync = (...args: any[]) => {
  if (String(args[1]).includes('slow-writer')) pause();
  return (writeFileSync as (...a: unknown[]) => void)(...args);
};
syncBuiltinESMExports();

const { acquireLock } = await import('../../../memory/files/lock.ts');
const lock = await acquireLock(process.argv[2]!, { command: 'slow-writer' });
process.stdout.write('held\n');
// Held as long as the test needs, however slow the machine: the test ends the input when done.
await new Promise((r) => process.stdin.once('end', r).resume());
await lock.release();
process.stdout.write('released\n');
