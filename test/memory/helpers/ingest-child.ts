// Child process for crash and concurrency tests: ingests PATHS into DIR, printing a line per commit.
//   ingest-child.ts DIR SEGMENT_CHARS PATHS...
// So that a test kills it at a chosen point whatever the machine's speed, it can stop there and wait,
// forever, for the kill:
//   PAUSE_AT_COMMIT=N      at the Nth commit line (printed before that segment is written)
//   PAUSE_IN_WRITE=TEXT    after the first write into a file whose path holds TEXT, printing `writing PATH`
import fs from 'node:fs';
import { ChunkStore } from '../../../memory/files/store.ts';

/** Prints `line` at once (stdout to a pipe may be asynchronous) and blocks this process for good. */
function stopHere(line: string): never {
  fs.writeSync(1, `${line}\n`);
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

const pauseAtCommit = Number(process.env.PAUSE_AT_COMMIT ?? 0);
const pauseInWrite = process.env.PAUSE_IN_WRITE;
if (pauseInWrite) {
  // The store writes files through node:fs's promises API (memory/fsutil.ts).
  const open = fs.promises.open;
  fs.promises.open = (async (...args: Parameters<typeof open>) => {
    const handle = await open(...args);
    const file = String(args[0]);
    if (file.includes(pauseInWrite)) {
      const write = handle.write.bind(handle) as (...a: unknown[]) => Promise<unknown>;
      handle.write = (async (...a: unknown[]) => {
        await write(...a);
        stopHere(`writing ${file}`);
      }) as typeof handle.write;
    }
    return handle;
  }) as typeof open;
}

const [dir, segmentChars, ...paths] = process.argv.slice(2);
// Waits for the other writers as long as the test lets it: on a loaded machine the queue can be long.
const store = await ChunkStore.open(dir!, { create: true, lockWaitMs: 600_000 });
let commits = 0;
const report = await store.ingestPaths(paths, {
  segmentChars: Number(segmentChars),
  onProgress: (p) => {
    if (p.phase !== 'commit') return;
    const line = `commit ${p.filesDone}`;
    if (++commits === pauseAtCommit) stopHere(line);
    process.stdout.write(`${line}\n`);
  },
});
await store.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
