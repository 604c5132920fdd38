// Child process for concurrency and crash tests of any store (a folder or a PostgreSQL URL):
//   ingest STORE SEGMENT_CHARS PATH...  ingests PATHs, printing `commit N` before each commit
//   remember STORE N PREFIX             remembers N memories, one `remember` call each
import { openStore } from '../../../memory/open.ts';

const [mode, name, arg1, ...rest] = process.argv.slice(2);
const store = await openStore(name!, { create: true, lockWaitMs: 120_000 });
if (mode === 'ingest') {
  const report = await store.ingestPaths(rest, {
    segmentChars: Number(arg1),
    onProgress: (p) => {
      if (p.phase === 'commit') process.stdout.write(`commit ${p.filesDone}\n`);
    },
  });
  process.stdout.write(`${JSON.stringify(report)}\n`);
} else {
  for (let i = 0; i < Number(arg1); i++)
    await store.remember({ text: `${rest[0]} memory ${i}`, topic: rest[0]! });
  process.stdout.write('done\n');
}
await store.close();
