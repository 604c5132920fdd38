/**
 * Messages between a session (host process) and the isolate process that runs its isolate (see
 * pool.ts and child.ts). Every request carries an id and gets exactly one `res` with that id; host calls
 * go the other way (`host` from the child, `reply` from the host). Values are plain data: nothing of
 * either process crosses except what is written here.
 */
import type { PreludeConfig } from '../prelude/index.ts';

/**
 * The child's file descriptor of the document pipe: a context document's text goes there as raw bytes
 * (a `doc` message on the IPC channel says which document and how many bytes), because Node's IPC
 * serializes every message, which costs seconds per 100 MB in each process; a pipe costs a copy.
 */
export const DOC_FD = 4;

/**
 * How a document's text is written on the pipe: UTF-8; `latin1` for ASCII text (the same bytes, which the
 * receiver turns into a string outside V8's heap: see doc-pipe.ts); UTF-16LE for text with lone surrogates.
 */
export type DocEncoding = 'utf8' | 'latin1' | 'utf16le';

export type Request =
  | {
      op: 'open';
      memoryMb: number;
      setupTimeoutMs: number;
      config: PreludeConfig;
      /** Registry ids of the session's documents, all sent before (`docs` messages). */
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
  /**
   * A context document follows on the document pipe: `bytes` bytes in `encoding`, after those of the
   * documents announced before it (no answer: an `open` that names it waits until it has arrived).
   */
  /**
   * Context documents follow on the document pipe, as one block: `bytes` bytes in `encoding`, after those
   * of the blocks announced before it, the documents' texts back to back (`chars` UTF-16 units each). The
   * process keeps one copy of the block and gives the isolate each document as a slice of it. No answer:
   * an `open` that names a document waits until its block has arrived.
   */
  | {
      t: 'docs';
      block: string;
      bytes: number;
      encoding: DocEncoding;
      docs: { id: string; chars: number }[];
      /** The host reads some of the texts from files as it writes them: a `docsRead` follows the bytes. */
      fromFile?: true;
    }
  /**
   * Whether a `fromFile` block's bytes on the pipe are its texts (`ok` false: a file changed while the host
   * read it). The process keeps the block only then; an `open` that names one of its documents waits for
   * this, and fails on a block that is not.
   */
  | { t: 'docsRead'; block: string; ok: boolean };

export type ToHost =
  | { t: 'ready' }
  | { t: 'res'; id: number; ok: true; value: unknown }
  | { t: 'res'; id: number; ok: false; error: string }
  | { t: 'host'; id: number; request: string }
  | { t: 'catastrophe'; message: string };
