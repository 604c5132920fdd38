// Child process for crash and concurrency tests: ingests PATHS into DIR, printing a line per commit.
import { ChunkStore } from '../../../memory/files/store.ts';

const [dir, segmentChars, ...paths] = process.argv.slice(2);
const store = await ChunkStore.open(dir!, { create: true, lockWaitMs: 60_000 });
const report = await store.ingestPaths(paths, {
  segmentChars: Number(segmentChars),
  onProgress: (p) => {
    if (p.phase === 'commit') process.stdout.write(`commit ${p.filesDone}\n`);
  },
});
await store.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
