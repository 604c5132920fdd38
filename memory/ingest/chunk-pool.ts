/**
 * Chunking on a worker thread: {@link workerChunker} starts one and hands it documents, and
 * {@link chunkerForIngest} picks it or the inline chunker by the size of the input.
 *
 * One worker is enough: an ingest's own thread spends about two thirds of its time indexing, linking and
 * writing, the worker the other third chunking and classifying, so the two keep one core each busy.
 */
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { RlmError } from '../../core/errors.ts';
import { type ChunkJob, type ChunkResult, type DocumentChunker, inlineChunker } from './chunk-job.ts';
import type { ChunkReply, ChunkRequest } from './chunk-worker.ts';

// Resolved against this module so it works from source (.ts, type-stripped) and from dist (.js).
const WORKER_URL = new URL(
  `./chunk-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/**
 * Input below which an ingest chunks inline. The worker overlaps chunking a batch with writing the one
 * before, so it needs two batches (4 MiB each) to gain anything, and it costs a thread's start and a
 * second tokenizer memo.
 */
export const CHUNK_WORKER_MIN_BYTES = 8 * 1024 * 1024;

/**
 * The inline chunker below {@link CHUNK_WORKER_MIN_BYTES} of input, a worker at or above it. The worker
 * starts with the first document to chunk: a re-run over unchanged files chunks nothing and starts none.
 * A worker that cannot be made (`new Worker` throws: no thread to spare under a process limit, say)
 * leaves the ingest chunking inline, slower but with the same records.
 */
export function chunkerForIngest(
  bytesTotal: number,
  start: () => DocumentChunker = () => workerChunker(),
): DocumentChunker {
  if (bytesTotal < CHUNK_WORKER_MIN_BYTES) return inlineChunker;
  let worker: DocumentChunker | undefined;
  const started = (): DocumentChunker => {
    try {
      return start();
    } catch {
      return inlineChunker;
    }
  };
  return {
    chunk: (job) => {
      worker ??= started();
      return worker.chunk(job);
    },
    close: async () => worker?.close(),
  };
}

/**
 * A chunker backed by a worker thread of its own, which {@link DocumentChunker.close} terminates. `thread`
 * replaces the worker's script and limits (tests: a thread that fails).
 */
export function workerChunker(thread: { url?: URL; resourceLimits?: ResourceLimits } = {}): DocumentChunker {
  // execArgv [] so flags of the parent (test runners, --no-node-snapshot) are not re-applied to the thread.
  const worker = new Worker(thread.url ?? WORKER_URL, {
    execArgv: [],
    ...(thread.resourceLimits ? { resourceLimits: thread.resourceLimits } : {}),
  });
  const pending = new Map<number, { resolve: (r: ChunkResult) => void; reject: (e: Error) => void }>();
  let next = 0;
  let failure: RlmError | null = null;
  const failAll = (err: RlmError) => {
    failure ??= err;
    for (const p of pending.values()) p.reject(failure);
    pending.clear();
  };
  worker.on('message', (reply: ChunkReply) => {
    const p = pending.get(reply.seq);
    if (!p) return;
    pending.delete(reply.seq);
    if ('result' in reply) p.resolve(reply.result);
    else p.reject(new RlmError(reply.error.code ?? 'RUNTIME', reply.error.message));
  });
  worker.on('error', (err) =>
    failAll(
      new RlmError(
        (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'MEMORY_LIMIT' : 'RUNTIME',
        `the ingest's chunking thread failed: ${err.message}`,
        {},
        { cause: err },
      ),
    ),
  );
  worker.on('exit', (code) =>
    failAll(new RlmError('RUNTIME', `the ingest's chunking thread stopped (exit code ${code})`)),
  );
  return {
    chunk(job: ChunkJob): Promise<ChunkResult> {
      if (failure) return Promise.reject(failure);
      const seq = next++;
      return new Promise((resolve, reject) => {
        pending.set(seq, { resolve, reject });
        worker.postMessage({ seq, job } satisfies ChunkRequest);
      });
    },
    async close(): Promise<void> {
      failAll(new RlmError('ABORTED', 'the ingest stopped before this document was chunked'));
      await worker.terminate();
    },
  };
}
