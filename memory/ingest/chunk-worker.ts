/**
 * Worker thread that chunks and classifies documents for an ingest ({@link ./chunk-pool.ts}), so the
 * ingest's own thread indexes and writes one batch while this one chunks the next.
 *
 * Protocol (host → worker): {@link ChunkRequest} → one {@link ChunkReply} per request, in order.
 */
import { parentPort } from 'node:worker_threads';
import { type ErrorCode, RlmError } from '../../core/errors.ts';
import { type ChunkJob, type ChunkResult, runChunkJob } from './chunk-job.ts';

export interface ChunkRequest {
  seq: number;
  job: ChunkJob;
}

export type ChunkReply =
  | { seq: number; result: ChunkResult }
  | { seq: number; error: { code: ErrorCode | null; message: string } };

function answer(req: ChunkRequest): ChunkReply {
  try {
    return { seq: req.seq, result: runChunkJob(req.job) };
  } catch (err) {
    const code = err instanceof RlmError ? err.code : null;
    return { seq: req.seq, error: { code, message: err instanceof Error ? err.message : String(err) } };
  }
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (req: ChunkRequest) => port.postMessage(answer(req)));
}
