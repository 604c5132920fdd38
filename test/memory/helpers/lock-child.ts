// Child process for the lock stress test: takes and drops a store's write lock N times, writing
// `enter PID` and `exit PID` lines to LOG while it holds it.
//   lock-child.ts DIR LOG N
import { appendFileSync } from 'node:fs';
import { acquireLock } from '../../../memory/files/lock.ts';

const [dir, log, n] = process.argv.slice(2);
for (let i = 0; i < Number(n); i++) {
  // Waits for the other writers as long as the test lets it: on a loaded machine the queue can be long.
  const lock = await acquireLock(dir!, { waitMs: 600_000, command: 'stress' });
  appendFileSync(log!, `enter ${process.pid}\n`);
  // Hold it a moment, as a writer does, so an intruder has time to show up in the log.
  const until = performance.now() + 0.2;
  while (performance.now() < until);
  appendFileSync(log!, `exit ${process.pid}\n`);
  await lock.release();
}
process.stdout.write('done\n');
