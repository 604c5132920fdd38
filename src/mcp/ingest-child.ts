/**
 * The process an `rlm serve` runs one `rlm_ingest` in (see ingest-process.ts). It takes one job from its
 * parent over IPC, ingests it as `rlm ingest` would (the same heap tuning), reports progress and the
 * result the same way, and exits: everything the ingest allocated goes back to the system with it.
 * Started by the parent only; nothing here is for people to run.
 */
import { setFlagsFromString } from 'node:v8';
import { keepHeapNearLiveSet } from '../../core/batch-heap.ts';
import { isRlmError } from '../../core/errors.ts';
import { openStore } from '../../memory/open.ts';
import type { IngestJob, ParentMessage } from './ingest-process.ts';
import { SERVER_LOCK_WAIT_MS } from './stores.ts';

// As bin/rlm.js does for `rlm ingest`, before anything is allocated: the young generation stays small.
setFlagsFromString('--semi-space-growth-factor=1');

const send = (message: ParentMessage) =>
  new Promise<void>((resolve) => {
    if (!process.connected) return resolve();
    process.send?.(message, undefined, undefined, () => resolve());
  });

/** How long a child whose parent is gone may take to stop on its own, ms (a wait for a lock ignores it). */
const ORPHAN_EXIT_MS = 10_000;

const controller = new AbortController();
// The parent is gone: a cancelled ingest commits nothing more, and the process ends whatever it waits for.
process.on('disconnect', () => {
  controller.abort();
  setTimeout(() => process.exit(130), ORPHAN_EXIT_MS).unref();
});

async function run(job: IngestJob): Promise<void> {
  const settled = keepHeapNearLiveSet({ after: 'stopped' });
  try {
    // Another rlm_ingest of the server (another child) may hold the folder lock: wait as the server does.
    const store = await openStore(job.location, {
      env: job.env,
      create: true,
      lockWaitMs: SERVER_LOCK_WAIT_MS,
    });
    try {
      const report = await store.ingestPaths(job.paths, {
        ...job.options,
        signal: controller.signal,
        ...(job.progress ? { onProgress: (progress) => void send({ type: 'progress', progress }) } : {}),
      });
      await send({ type: 'done', report });
    } finally {
      await store.close();
    }
  } catch (err) {
    await send(
      isRlmError(err)
        ? { type: 'error', code: err.code, message: err.message, details: { ...err.details } }
        : { type: 'error', code: null, message: err instanceof Error ? err.message : String(err) },
    );
  } finally {
    settled();
  }
}

process.on('message', (message: { type: 'job'; job: IngestJob } | { type: 'cancel' }) => {
  if (message.type === 'cancel') controller.abort();
  else
    void run(message.job).finally(() => {
      if (process.connected) process.disconnect();
    });
});
