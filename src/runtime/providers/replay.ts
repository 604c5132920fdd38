/**
 * `replay:TRACE.jsonl` — answers with the model replies recorded in a trace (its `model_call` events), so
 * a real run can be reproduced offline and kept as a regression test. Replies are handed out per span
 * (the root and each sub-call) in recorded order when the request names its span, which keeps replays of
 * concurrent sub-calls exact; otherwise per depth in recorded order. A request the trace has no reply for,
 * or whose kind (turn, last call, plain completion) differs from the recorded one, is an error that says
 * where the run left the recording.
 */
import { readFileSync } from 'node:fs';
import { RlmError } from '../../../core/errors.ts';
import { LEAF_PROMPT } from '../../prompts/leaf.ts';
import type { Model, ModelRequest, ModelResponse } from '../model.ts';
import { type ModelCallEvent, parseTrace } from '../trace.ts';

export interface ReplayModelOptions {
  /** Reported spec (default `replay:<source>`). */
  spec?: string;
  /** Where the events came from, named in errors. */
  source?: string;
  /** Which run of a trace holding several (default: the first). */
  run?: string;
}

type Recorded = Pick<ModelCallEvent, 'span' | 'depth' | 'kind' | 'iteration' | 'reply' | 'usage' | 'model'>;

/** A {@link Model} replaying recorded replies. */
export class ReplayModel implements Model {
  readonly spec: string;
  readonly #source: string;
  readonly #bySpan = new Map<string, Recorded[]>();
  readonly #byDepth = new Map<number, Recorded[]>();
  readonly #recorded: number;

  constructor(calls: readonly Recorded[], opts: ReplayModelOptions = {}) {
    this.#source = opts.source ?? 'the recording';
    this.spec = opts.spec ?? `replay:${this.#source}`;
    for (const c of calls) {
      push(this.#bySpan, c.span, c);
      push(this.#byDepth, c.depth, c);
    }
    this.#recorded = calls.length;
  }

  /** Reads the `model_call` events of one run of a JSONL trace; BAD_INPUT when there are none. */
  static fromFile(path: string, opts: Omit<ReplayModelOptions, 'source'> = {}): ReplayModel {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new RlmError('BAD_INPUT', `cannot read replay trace ${path}: ${String(code ?? 'unreadable')}`, {
        path,
      });
    }
    const calls = parseTrace(text).filter((e): e is ModelCallEvent => e.type === 'model_call');
    const run = opts.run ?? calls[0]?.run;
    const mine = calls.filter((c) => c.run === run);
    if (mine.length === 0) {
      throw new RlmError(
        'BAD_INPUT',
        `replay trace ${path} holds no model_call events (record one with --trace)`,
        {
          path,
        },
      );
    }
    return new ReplayModel(mine, { ...opts, source: path });
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    if (request.signal?.aborted) throw new RlmError('ABORTED', 'replay: aborted');
    const bySpan = request.span === undefined ? undefined : this.#bySpan.get(request.span);
    const queue = bySpan ?? this.#byDepth.get(request.depth);
    const where =
      request.span === undefined ? `depth ${request.depth}` : `span ${request.span} (depth ${request.depth})`;
    const next = queue?.shift();
    if (next === undefined) {
      throw new RlmError(
        'SCRIPT_EXHAUSTED',
        `replay: ${this.#source} has no reply left for ${where}; the run went past the recording (${this.#recorded} replies recorded)`,
      );
    }
    // Keep the other index in step: a reply handed out by span is used up for its depth too, and back.
    remove(bySpan === undefined ? this.#bySpan.get(next.span) : this.#byDepth.get(next.depth), next);
    const kind = requestKind(request);
    const recordedKind = next.kind === 'leaf' ? 'leaf' : 'turn';
    if (kind !== recordedKind) {
      throw new RlmError(
        'SCRIPT_EXHAUSTED',
        `replay: the run diverged from ${this.#source} at ${where}: it asks for a ${kind === 'leaf' ? 'plain completion' : 'REPL turn'} where the recording has a ${next.kind === 'leaf' ? 'plain completion' : `${next.kind} (iteration ${next.iteration})`}`,
      );
    }
    return { text: next.reply, usage: { ...next.usage }, model: next.model, stopReason: 'replay' };
  }
}

/** A plain completion is one user message under the leaf prompt; everything else is an RLM turn. */
function requestKind(request: ModelRequest): 'leaf' | 'turn' {
  return request.system === LEAF_PROMPT ? 'leaf' : 'turn';
}

function push<K>(map: Map<K, Recorded[]>, key: K, value: Recorded): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

function remove(list: Recorded[] | undefined, value: Recorded): void {
  if (list === undefined) return;
  const i = list.indexOf(value);
  if (i >= 0) list.splice(i, 1);
}
