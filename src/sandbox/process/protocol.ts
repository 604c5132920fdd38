/**
 * Messages between a session (host process) and the isolate process that runs its isolate (see
 * pool.ts and child.ts). Every request carries an id and gets exactly one `res` with that id; host calls
 * go the other way (`host` from the child, `reply` from the host). Values are plain data: nothing of
 * either process crosses except what is written here.
 */
import type { PreludeConfig } from '../prelude/index.ts';

/**
 * Characters per `doc` message. A large context document goes in small parts sent without waiting:
 * Node's IPC is several times slower on megabyte messages.
 */
export const DOC_PART_CHARS = 1 << 16;

export type Request =
  | {
      op: 'open';
      memoryMb: number;
      setupTimeoutMs: number;
      config: PreludeConfig;
      /** Registry ids of the session's documents, all sent before (`doc` messages). */
      docs: string[];
      prewarm: boolean;
    }
  | { op: 'run'; source: string; file: string; lineOffset: number; declared: string[]; cpuMs: number }
  | { op: 'collect'; timeoutMs: number }
  | { op: 'readVar'; name: string; timeoutMs: number }
  | { op: 'salvage' }
  | { op: 'close' };

/** What a `run` gave. `cpuMs` is the isolate's CPU time for the block. */
export type RunReply = { cpuMs: number; disposed: boolean } & (
  | { kind: 'compileError'; name: string; message: string }
  | { kind: 'done'; value: string }
  | { kind: 'pending' }
  | { kind: 'error'; message: string }
);

/** What `collect` and `readVar` gave: the entry's JSON result, nothing, or that the call failed. */
export type EntryReply =
  | { status: 'delivered'; value: string }
  | { status: 'none' }
  | { status: 'failed'; message: string; disposed: boolean };

export type ToChild =
  | { t: 'req'; id: number; req: Request }
  | { t: 'reply'; id: number; reply: string }
  /** A part of a context document (no answer: the next `open` finds the document or fails). */
  | { t: 'doc'; id: string; text: string; last: boolean };

export type ToHost =
  | { t: 'ready' }
  | { t: 'res'; id: number; ok: true; value: unknown }
  | { t: 'res'; id: number; ok: false; error: string }
  | { t: 'host'; id: number; request: string }
  | { t: 'catastrophe'; message: string };
