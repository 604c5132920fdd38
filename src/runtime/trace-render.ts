/**
 * `rlm trace show`: renders trace events as an indented recursion tree for a terminal. Sub-calls appear
 * under the block that made them, their own turns one level deeper. Plain text unless colour is asked
 * for, so the output can be piped and diffed.
 */
import { readFile } from 'node:fs/promises';
import { RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { oneLine } from './text.ts';
import {
  type ModelCallEvent,
  type OutputEvent,
  parseTrace,
  type RunEndEvent,
  type RunStartEvent,
  type SubcallEndEvent,
  type SubcallStartEvent,
  type TraceEvent,
} from './trace.ts';
import { runTimes } from './trajectory.ts';

/** Rendering options. */
export interface RenderOptions {
  /** ANSI colours (default false). */
  color?: boolean;
  /** Maximum line width in characters (default 120); ignored with `full`. */
  width?: number;
  /** Whole texts: every line of each block, output, prompt and answer, nothing cut (default false). */
  full?: boolean;
  /** Only the run with this id (or unique id prefix). */
  run?: string;
}

type Paint = (code: string, s: string) => string;

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** A duration for people: `850ms`, `2.4s`, `3m05s`. */
function fmtMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** The whole call's time, and the run's own when setup (models, reading the context) took part of it. */
function runTime(elapsedMs: number, runMs: number): string {
  const t = runTimes(elapsedMs, runMs);
  return t.setupMs >= 1 ? `${fmtMs(t.totalMs)} in all (run ${fmtMs(t.runMs)})` : fmtMs(t.totalMs);
}

const fmtUsd = (usd: number): string =>
  usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;

function tokens(u: { inputTokens: number; outputTokens: number }): string {
  return `${fmtInt(u.inputTokens)} in / ${fmtInt(u.outputTokens)} out`;
}

class Renderer {
  readonly lines: string[] = [];
  readonly #width: number;
  readonly #full: boolean;
  readonly #paint: Paint;
  readonly #bySpan = new Map<string, TraceEvent[]>();
  readonly #ends = new Map<string, SubcallEndEvent>();
  readonly #blobs = new Map<string, string>();

  constructor(events: TraceEvent[], opts: RenderOptions) {
    this.#width = Math.max(40, opts.width ?? 120);
    this.#full = opts.full === true;
    this.#paint = opts.color === true ? (code, s) => `\x1b[${code}m${s}\x1b[0m` : (_c, s) => s;
    for (const e of events) {
      if (e.type === 'blob') this.#blobs.set(e.id, e.text);
      const list = this.#bySpan.get(e.span) ?? [];
      list.push(e);
      this.#bySpan.set(e.span, list);
      if (e.type === 'subcall_end') this.#ends.set(e.id, e);
    }
  }

  /** The whole text behind a blob reference when rendering in full, else the preview. */
  #whole(preview: string, blob: string | undefined): string {
    return this.#full && blob !== undefined ? (this.#blobs.get(blob) ?? preview) : preview;
  }

  /**
   * Adds a line; `tail` is free text cut to the remaining width. In full mode nothing is cut: a one-line
   * tail follows the head, a longer one comes below it, every line indented one step further.
   */
  #line(indent: number, head: string, tail = '', tailColor = '2'): void {
    const pad = '  '.repeat(indent);
    if (this.#full) {
      const lines = tail.replace(/\n+$/, '').split('\n');
      if (lines.length <= 1) {
        this.lines.push(`${pad}${head}${tail === '' ? '' : ` ${this.#paint(tailColor, tail)}`}`);
        return;
      }
      this.lines.push(pad + head);
      for (const l of lines) this.lines.push(`${pad}  ${this.#paint(tailColor, l)}`.trimEnd());
      return;
    }
    const visible = pad.length + stripAnsi(head).length;
    const room = this.#width - visible - 1;
    const cut = tail === '' || room < 8 ? '' : ` ${this.#paint(tailColor, oneLine(tail, room))}`;
    this.lines.push(cutVisible(pad + head + cut, this.#width));
  }

  #status(status: string): string {
    const color =
      status === 'final' || status === 'ok' ? '32' : status === 'error' || status === 'aborted' ? '31' : '33';
    return this.#paint(color, status);
  }

  run(start: RunStartEvent | undefined, end: RunEndEvent | undefined): void {
    const r = end?.result;
    // Its id's first characters, which --run takes (a unique prefix is enough).
    const id = (start ?? end)?.run.slice(0, RUN_ID_SHOWN);
    const parts = [`${this.#paint('1', 'run')}${id ? ` ${id}` : ''}`, start?.model ?? '?'];
    if (r !== undefined) {
      parts.push(
        this.#status(r.status),
        plural(r.iterations, 'turn'),
        plural(r.subCalls, 'sub-call'),
        `depth ${r.maxDepthReached}`,
        runTime(r.elapsedMs, end!.t),
        tokens(r.usage),
        fmtUsd(r.usage.costUsd),
      );
    } else {
      parts.push(this.#status('unfinished'));
    }
    this.#line(0, parts.join(' · '));
    if (start !== undefined) this.#line(1, 'Q:', start.question, '0');
    this.#span('root', 1);
    if (r !== undefined) this.#line(1, `answer${r.error ? ` (${r.error.code})` : ''}:`, r.answer, '0');
  }

  #span(span: string, indent: number): void {
    let inTurn = false;
    for (const e of this.#bySpan.get(span) ?? []) {
      const body = indent + (inTurn ? 1 : 0);
      switch (e.type) {
        case 'model_call':
          if (e.kind !== 'leaf') inTurn = true;
          this.#model(e, indent);
          break;
        case 'block':
          this.#line(body, `block ${e.index}:`, e.code);
          break;
        case 'output':
          this.#output(e, body + 1);
          break;
        case 'subcall_start':
          this.#subcall(e, body + 1);
          break;
        case 'final':
          this.#line(indent, `${this.#paint('32', 'final')} (${e.source}):`, e.answer, '0');
          break;
        case 'error':
          this.#line(indent, `${this.#paint('31', 'error')} ${e.code}:`, e.message, '31');
          break;
        default:
          break;
      }
    }
  }

  #model(e: ModelCallEvent, indent: number): void {
    const label =
      e.kind === 'turn' ? `turn ${e.iteration}` : e.kind === 'last_call' ? 'last call' : 'completion';
    const cost = e.costUsd > 0 ? ` · ${fmtUsd(e.costUsd)}` : '';
    this.#line(indent, `${this.#paint('1', label)} · ${fmtMs(e.durationMs)} · ${tokens(e.usage)}${cost}`);
  }

  #output(e: OutputEvent, indent: number): void {
    const head = e.ok
      ? `→ ${this.#paint('32', 'ok')} ${fmtMs(e.durationMs)}`
      : `→ ${this.#paint('31', e.error?.code ?? 'error')} ${fmtMs(e.durationMs)}`;
    const text = e.ok ? (e.final !== null ? `FINAL ${e.final}` : e.stdout) : (e.error?.message ?? '');
    this.#line(indent, `${head}${e.reset ? ' (session reset)' : ''}`, text);
  }

  #subcall(e: SubcallStartEvent, indent: number): void {
    const end = this.#ends.get(e.id);
    const parts = [this.#paint('36', `sub ${e.id}`), `depth ${e.calleeDepth} ${e.kind}`];
    if (e.cached) parts.push('cached');
    else if (end === undefined) parts.push(this.#status('unfinished'));
    else parts.push(this.#status(end.ok ? (end.status ?? 'ok') : 'error'), fmtMs(end.durationMs));
    if (e.contextChars > 0)
      parts.push(`${fmtInt(e.contextChars)} ${e.contextChars === 1 ? 'char' : 'chars'}`);
    this.#line(indent, `${parts.join(' · ')}:`, this.#whole(e.prompt, e.promptBlob));
    if (!e.cached) this.#span(e.id, indent + 1);
    if (end !== undefined) {
      if (end.ok) this.#line(indent + 1, '⇐', this.#whole(end.answer, end.answerBlob));
      else
        this.#line(
          indent + 1,
          `⇐ ${this.#paint('31', end.error?.code ?? 'error')}:`,
          end.error?.message ?? '',
          '31',
        );
    }
  }
}

/** Cuts a line to `width` visible characters, leaving ANSI escapes intact and closing any colour. */
function cutVisible(line: string, width: number): string {
  if (stripAnsi(line).length <= width) return line;
  let out = '';
  let visible = 0;
  for (let i = 0; i < line.length && visible < width - 1; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      out += line.slice(i, end + 1);
      i = end;
      continue;
    }
    out += line[i];
    visible++;
  }
  return `${out}…${line.includes('\x1b[') ? '\x1b[0m' : ''}`;
}

function stripAnsi(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}

/** Events grouped by run, in the order runs first appear. */
function groupRuns(events: TraceEvent[]): Map<string, TraceEvent[]> {
  const runs = new Map<string, TraceEvent[]>();
  for (const e of events) {
    const list = runs.get(e.run) ?? [];
    list.push(e);
    runs.set(e.run, list);
  }
  return runs;
}

/**
 * The events of the run whose id is `id` or starts with it. BAD_INPUT, listing the runs there are, when
 * none or several match.
 */
/** Characters of a run's id the tree shows: a prefix --run takes. */
const RUN_ID_SHOWN = 8;

export function selectRun(events: TraceEvent[], id: string): TraceEvent[] {
  const runs = groupRuns(events);
  const exact = runs.get(id);
  if (exact !== undefined) return exact;
  const matches = [...runs.keys()].filter((r) => r.startsWith(id));
  if (matches.length === 1) return runs.get(matches[0] as string) as TraceEvent[];
  const list = [...runs.keys()].join(', ') || 'none';
  throw new RlmError(
    'BAD_INPUT',
    matches.length === 0
      ? `no run ${id} in this trace (runs: ${list})`
      : `run id ${id} is ambiguous (matches: ${matches.join(', ')})`,
    { run: id },
  );
}

/** Renders every run found in `events` (in file order) as an indented tree; only `opts.run` if given. */
export function renderTraceTree(events: TraceEvent[], opts: RenderOptions = {}): string {
  const runs = groupRuns(opts.run === undefined ? events : selectRun(events, opts.run));
  const out: string[] = [];
  for (const list of runs.values()) {
    const r = new Renderer(list, opts);
    const start = list.find((e): e is RunStartEvent => e.type === 'run_start');
    const end = list.find((e): e is RunEndEvent => e.type === 'run_end');
    r.run(start, end);
    out.push(r.lines.join('\n'));
  }
  return out.length === 0 ? '(empty trace)\n' : `${out.join('\n\n')}\n`;
}

/** Reads a JSONL trace file and renders it; BAD_INPUT when it is missing or holds no trace events. */
export async function renderTraceFile(path: string, opts: RenderOptions = {}): Promise<string> {
  return renderTraceTree(await readTraceFile(path), opts);
}

/** The events of a JSONL trace file; BAD_INPUT when it is missing or holds no trace events. */
export async function readTraceFile(path: string): Promise<TraceEvent[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT') throw new RlmError('BAD_INPUT', `no trace file at ${path}`, { path });
    throw new RlmError('BAD_INPUT', `cannot read trace file ${path}: ${(err as Error).message}`, { path });
  }
  const events = parseTrace(text);
  if (events.length === 0 && text.trim() !== '') {
    throw new RlmError('BAD_INPUT', `${path} is not an rlm trace (write one with rlm answer --trace FILE)`, {
      path,
    });
  }
  return events;
}
