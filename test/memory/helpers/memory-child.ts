// Child process for memory concurrency and crash tests.
//   remember DIR N PREFIX       remembers N memories, one `remember` call each
//   consolidate DIR TOPIC WHEN  consolidates TOPIC and dies by SIGKILL just before or just after the
//                               manifest rename that commits it (WHEN = before | after)
import fs from 'node:fs';
import { ChunkStore } from '../../../memory/files/store.ts';

const [mode, dir, arg1, arg2] = process.argv.slice(2);
// Waits for the other writers as long as the test lets it: on a loaded machine the queue can be long.
const store = await ChunkStore.open(dir!, { create: true, lockWaitMs: 600_000 });
if (mode === 'remember') {
  for (let i = 0; i < Number(arg1); i++) await store.remember({ text: `${arg2} memory ${i}`, topic: arg2! });
  await store.close();
  process.stdout.write('done\n');
} else {
  const rename = fs.promises.rename;
  fs.promises.rename = async (from: fs.PathLike, to: fs.PathLike) => {
    const commit = String(to).endsWith('rlm-store.json');
    if (commit && arg2 === 'before') process.kill(process.pid, 'SIGKILL');
    await rename(from, to);
    if (commit && arg2 === 'after') process.kill(process.pid, 'SIGKILL');
  };
  await store.consolidate(arg1!, async () => 'the summary of every fact');
  process.stdout.write('survived\n');
}
