/**
 * One `rlm_ingest` in a child process of its own. An ingest of 100 MB allocates a few hundred MB while it
 * runs; in a long-lived server glibc keeps most of that once it is freed (measured: `rlm serve` at 105 MB
 * before a 100 MB `rlm_ingest`, 267–286 MB after, for the rest of its life). In a child it all goes back
 * when the child exits, and the child runs with the tuning of `rlm ingest` (one malloc arena, a small
 * young generation), which the server cannot set for itself once it runs. Progress, the report, errors
 * (with their codes) and cancellation cross over IPC; the store is the child's to write, as a terminal's
 * `rlm ingest` would, and the server sees the commit on its next read.
 */
import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Env, processEnv } from '../../core/env.ts';
import { type ErrorCode, RlmError } from '../../core/errors.ts';
import type { IngestOptions, IngestProgress, IngestReport } from '../../memory/types.ts';

const CHILD_PATH = fileURLToPath(
  new URL(`./ingest-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);
/** How long a cancelled child may take to stop before it is killed (it checks per file part). */
const CANCEL_GRACE_MS = 10_000;
/** The end of the child's stderr kept for the message when it dies. */
const STDERR_TAIL = 2_000;

/** What the child is asked to do: what `openStore` and `ingestPaths` take, without functions. */
export interface IngestJob {
  location: string;
  env: Env;
  paths: string[];
  options: Pick<IngestOptions, 'chunker' | 'chunkTokens' | 'overlapTokens' | 'tags'>;
  /** Whether to send progress. */
  progress: boolean;
}

/** What the child sends back. */
export type ParentMessage =
  | { type: 'progress'; progress: IngestProgress }
  | { type: 'done'; report: IngestReport }
  | { type: 'error'; code: ErrorCode | null; message: string; details?: Record<string, unknown> };

/**
 * The environment of the child: the server's, with one malloc arena on glibc unless the user chose a
 * number (bin/lib/batch-malloc.js gives `rlm ingest` the same, for the reasons given there; elsewhere
 * the variable means nothing).
 */
function childEnv(): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: '1', ...processEnv() };
}

/**
 * Runs `job` in a child process and resolves with its report. `signal` cancels it: the child stops at
 * its next check and the promise rejects with the child's ABORTED (or, past a grace period, the child is
 * killed). A child that dies without a word rejects with RUNTIME and the end of its stderr.
 */
export function ingestInChild(
  job: IngestJob,
  opts: { signal?: AbortSignal; onProgress?: (p: IngestProgress) => void } = {},
): Promise<IngestReport> {
  return new Promise((resolve, reject) => {
    const child = fork(CHILD_PATH, [], {
      env: childEnv(),
      execArgv: [],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-STDERR_TAIL);
    });
    let outcome: { report: IngestReport } | { error: Error } | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const cancel = () => {
      if (child.connected) child.send({ type: 'cancel' });
      killTimer = setTimeout(() => child.kill('SIGKILL'), CANCEL_GRACE_MS);
      killTimer.unref();
    };
    opts.signal?.addEventListener('abort', cancel, { once: true });
    child.on('message', (m: ParentMessage) => {
      if (m.type === 'progress') opts.onProgress?.(m.progress);
      else if (m.type === 'done') outcome = { report: m.report };
      else
        outcome = {
          error: m.code === null ? new Error(m.message) : new RlmError(m.code, m.message, m.details ?? {}),
        };
    });
    let settled = false;
    const settle = (result: { report: IngestReport } | { error: Error }) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', cancel);
      clearTimeout(killTimer);
      if ('report' in result) resolve(result.report);
      else reject(result.error);
    };
    // 'on', not 'once': a failed send is an 'error' too, and an unheard one would crash the server.
    child.on('error', (err) => {
      // A process that never started sends no 'close'. Any other error (a send to a child that just
      // ended) leaves the outcome to 'close', which knows how the child ended.
      if (child.pid === undefined)
        settle({ error: new RlmError('RUNTIME', `could not start the ingest process: ${err.message}`) });
    });
    child.once('close', (code, signal) => {
      if (outcome === undefined) {
        const how = signal === null ? `with code ${code}` : `on ${signal}`;
        const said = stderr.trim() === '' ? '' : `: ${stderr.trim().split('\n').slice(-3).join(' | ')}`;
        outcome = opts.signal?.aborted
          ? { error: new RlmError('ABORTED', 'the ingest was cancelled') }
          : { error: new RlmError('RUNTIME', `the ingest process exited ${how}${said}`) };
      }
      settle(outcome);
    });
    try {
      child.send({ type: 'job', job });
    } catch {
      // Not started ('error' above says why) or already gone ('close' settles it).
    }
    if (opts.signal?.aborted) cancel();
  });
}
