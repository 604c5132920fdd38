/**
 * Trace events of a run and where they go: a JSONL file (one event a line, appended) and an `onEvent`
 * callback. Every event names its run, the span it belongs to (the root or a sub-call) and its depth, so
 * the recursion tree can be rebuilt from the file alone (see trace-render.ts).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { RlmError } from '../../core/errors.ts';
import { folderProblem } from '../../core/paths.ts';
import type { ContextShape } from '../prompts/shape.ts';
import type { Usage } from './model.ts';
import type { BlockOutput, ModelCallKind, RlmResult } from './result.ts';

/**
 * How much a trace records. `full` (the default) adds every model request (`model_request`, with large
 * texts stored once as `blob` events) and the whole prompt and answer of each sub-call; `summary` keeps
 * replies, blocks, outputs and sub-call previews only, for small traces of big runs.
 */
export type TraceLevel = 'summary' | 'full';

/** The trace levels, for validation. */
export const TRACE_LEVELS: readonly TraceLevel[] = ['summary', 'full'];

/** Texts longer than this go to a `blob` event (once per run) and are referenced by id. */
const INLINE_TEXT_CHARS = 2000;

/** Fields every event carries. */
interface TraceBase {
  /** Id of the run (several runs may append to one file). */
  run: string;
  /** Milliseconds since the run started. */
  t: number;
  /** `root` or the id of the sub-call this event happened in. */
  span: string;
  depth: number;
}

export interface RunStartEvent extends TraceBase {
  type: 'run_start';
  time: string;
  question: string;
  model: string;
  subModel: string;
  maxDepth: number;
  maxIterations: number;
  context: ContextShape;
}

export interface ModelCallEvent extends TraceBase {
  type: 'model_call';
  /** 1-based turn of the span; 0 for a leaf completion. */
  iteration: number;
  kind: ModelCallKind;
  model: string;
  usage: Usage;
  costUsd: number;
  durationMs: number;
  reply: string;
}

/**
 * One message of a recorded request: its text inline, or the id of the `blob` holding it, or (for the
 * model's own earlier reply) the iteration of the span's `model_call` whose `reply` it is.
 */
export interface TraceMessage {
  role: 'user' | 'assistant';
  text?: string;
  blob?: string;
  replyOf?: number;
}

/**
 * A request sent to a model (level `full`), emitted just before the call. The system prompt comes with
 * the first request of a span only (it never changes within one); later requests carry what changed:
 * the conversation is the previous request's messages up to `from`, then `messages`.
 */
interface ModelRequestEvent extends TraceBase {
  type: 'model_request';
  iteration: number;
  kind: ModelCallEvent['kind'];
  /** Blob id of the system prompt (first request of the span only). */
  system?: string;
  from: number;
  messages: TraceMessage[];
}

/** A large text stored once per run; events refer to it by `id`. Always written before its first use. */
interface BlobEvent extends TraceBase {
  type: 'blob';
  id: string;
  text: string;
}

interface BlockEvent extends TraceBase {
  type: 'block';
  iteration: number;
  /** 1-based index of the block in the reply. */
  index: number;
  code: string;
}

/** A block's output; its `final` is cut by {@link answerPreview}: the `final` event holds it whole. */
export interface OutputEvent extends TraceBase, BlockOutput {
  type: 'output';
  iteration: number;
  index: number;
}

export interface SubcallStartEvent extends TraceBase {
  type: 'subcall_start';
  /** Span id of the new call; `span`/`depth` are those of the caller... */
  id: string;
  /** ...and this is the depth the new call runs at. */
  calleeDepth: number;
  kind: 'rlm' | 'leaf';
  /** The prompt, cut to a preview of 2000 characters... */
  prompt: string;
  /** ...and, at level `full` when it was cut, the blob with all of it. */
  promptBlob?: string;
  contextChars: number;
  cached: boolean;
}

export interface SubcallEndEvent extends TraceBase {
  type: 'subcall_end';
  id: string;
  calleeDepth: number;
  ok: boolean;
  /** The answer, cut to a preview of 2000 characters... */
  answer: string;
  /** ...and, at level `full` when it was cut, the blob with all of it. */
  answerBlob?: string;
  cached: boolean;
  durationMs: number;
  /** Status of a sub-RLM run (absent for leaves). */
  status?: string;
  error?: { code: string; message: string };
}

export interface FinalEvent extends TraceBase {
  type: 'final';
  /** Where the answer came from: FINAL in code, FINAL/FINAL_VAR in the reply, or the last call. */
  source: 'code' | 'text' | 'variable' | 'last_call' | 'partial';
  answer: string;
}

interface ErrorEvent extends TraceBase {
  type: 'error';
  code: string;
  message: string;
}

export interface RunEndEvent extends TraceBase {
  type: 'run_end';
  /** The run's result; its `answer` is cut by {@link answerPreview} (the `final` event holds it whole). */
  result: RlmResult;
}

/** Characters of an answer repeated outside the `final` event. */
const ANSWER_PREVIEW_CHARS = 500;

/**
 * An answer as repeated in `output` and `run_end` events: a trace stores a long answer once, in the
 * `final` event, not three times.
 */
export function answerPreview(answer: string): string {
  if (answer.length <= ANSWER_PREVIEW_CHARS) return answer;
  const rest = answer.length - ANSWER_PREVIEW_CHARS;
  return `${answer.slice(0, ANSWER_PREVIEW_CHARS)}… [${rest} more characters in the final event]`;
}

/** Everything a trace may contain. */
export type TraceEvent =
  | RunStartEvent
  | ModelCallEvent
  | ModelRequestEvent
  | BlobEvent
  | BlockEvent
  | OutputEvent
  | SubcallStartEvent
  | SubcallEndEvent
  | FinalEvent
  | ErrorEvent
  | RunEndEvent;

/** Distributive Omit, so each event type keeps its own fields. */
export type EventBody = TraceEvent extends infer E
  ? E extends TraceEvent
    ? Omit<E, keyof TraceBase>
    : never
  : never;

/** A destination for events. */
export interface TraceSink {
  write(event: TraceEvent): void;
  close(): void;
}

/**
 * Appends events to a JSONL file. The file is opened once in append mode and each event is one `write`
 * of one line, so concurrent writers (two runs, one file) interleave whole lines.
 */
export class JsonlTraceFile implements TraceSink {
  readonly path: string;
  #fd: number | undefined;

  constructor(path: string) {
    this.path = path;
    // A missing folder is refused, not made, as every file rlm writes where it is told (`rlm trace html
    // --out`): a typo in a folder's name should not leave a new folder behind.
    try {
      this.#fd = openSync(path, 'a');
    } catch (err) {
      throw new RlmError(
        'BAD_INPUT',
        `cannot open trace file ${path}: ${folderProblem(path) ?? (err as Error).message}`,
        { path },
        { cause: err },
      );
    }
  }

  write(event: TraceEvent): void {
    if (this.#fd === undefined) return;
    writeSync(this.#fd, `${JSON.stringify(event)}\n`);
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Stamps events with run, time, span and depth, and fans them out to every sink and the callback. */
export class Tracer {
  readonly run: string;
  readonly level: TraceLevel;
  readonly #start: number;
  readonly #sinks: TraceSink[];
  readonly #onEvent: ((e: TraceEvent) => void) | undefined;
  readonly #blobs = new Set<string>();

  constructor(
    run: string,
    sinks: TraceSink[],
    onEvent?: (e: TraceEvent) => void,
    start = performance.now(),
    level: TraceLevel = 'full',
  ) {
    this.run = run;
    this.#sinks = sinks;
    this.#onEvent = onEvent;
    this.#start = start;
    this.level = level;
  }

  /** True when the trace is `full` and anything listens: worth building requests and blobs. */
  get full(): boolean {
    return this.level === 'full' && this.active;
  }

  /**
   * The id of a blob holding `text`, emitting the `blob` event the first time this run sees the text.
   * Ids are content hashes, so a system prompt shared by a hundred sub-calls is stored once.
   */
  blob(span: string, depth: number, text: string): string {
    const id = `b${createHash('sha256').update(text).digest('base64url').slice(0, 16)}`;
    if (!this.#blobs.has(id)) {
      this.#blobs.add(id);
      this.emit(span, depth, { type: 'blob', id, text });
    }
    return id;
  }

  /** `text` inline when short, else a blob reference (level `full` only). */
  textRef(span: string, depth: number, text: string): { text: string } | { blob: string } {
    return text.length <= INLINE_TEXT_CHARS ? { text } : { blob: this.blob(span, depth, text) };
  }

  /** Milliseconds since the run started. */
  now(): number {
    return performance.now() - this.#start;
  }

  /** True when anything listens (lets callers skip building big payloads). */
  get active(): boolean {
    return this.#sinks.length > 0 || this.#onEvent !== undefined;
  }

  emit(span: string, depth: number, body: EventBody): void {
    if (!this.active) return;
    const event = { run: this.run, t: Math.round(this.now() * 10) / 10, span, depth, ...body } as TraceEvent;
    for (const s of this.#sinks) {
      try {
        s.write(event);
      } catch {
        // A full disk must not fail the run; the answer matters more than its trace.
      }
    }
    if (this.#onEvent !== undefined) {
      try {
        this.#onEvent(event);
      } catch {
        // A throwing listener is the caller's bug; it must not change the run's outcome.
      }
    }
  }

  close(): void {
    for (const s of this.#sinks) s.close();
  }
}

/** Parses JSONL trace text; blank and unparsable lines are skipped (a crashed run may leave half a line). */
export function parseTrace(text: string): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const e = JSON.parse(line) as TraceEvent;
      if (e !== null && typeof e === 'object' && typeof e.type === 'string') events.push(e);
    } catch {
      // skip the torn line
    }
  }
  return events;
}
