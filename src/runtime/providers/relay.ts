/**
 * `relay:DIR` — a person or a separate agent plays the model by hand. Each request is written to
 * `DIR/NNN.request.md` (the system prompt and every message, as plain Markdown, with the call's depth);
 * the relay then waits for `DIR/NNN.reply.md` and answers with its text. Whoever plays the model needs to
 * see only the request files. Combined with `--trace`, a hand-played run is recorded and can be replayed
 * offline with `replay:`.
 */
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RlmError } from '../../../core/errors.ts';
import { abortedError, sleep } from '../../../core/http-retry.ts';
import { makeFolderSync } from '../../../core/paths.ts';
import { countTokens as defaultCountTokens } from '../../../memory/ingest/tokens.ts';
import type { Model, ModelRequest, ModelResponse } from '../model.ts';

export interface RelayModelOptions {
  /** How often to look for a reply, ms (default 250). */
  pollMs?: number;
  /** Give up waiting for one reply after this long, ms (default 1 hour). */
  timeoutMs?: number;
  /** Token counter for usage figures (default: the project tokenizer). */
  countTokens?: (text: string) => number;
}

const REQUEST = /^(\d+)\.request\.md$/;

/** A {@link Model} whose replies are written by hand into files. */
export class RelayModel implements Model {
  readonly spec: string;
  readonly dir: string;
  readonly #opts: RelayModelOptions;
  readonly #count: (text: string) => number;
  #next: number;

  constructor(dir: string, opts: RelayModelOptions = {}) {
    this.dir = dir;
    this.spec = `relay:${dir}`;
    this.#opts = opts;
    this.#count = opts.countTokens ?? defaultCountTokens;
    try {
      makeFolderSync(dir);
    } catch (err) {
      if (err instanceof RlmError) throw err;
      throw new RlmError(
        'BAD_INPUT',
        `relay: cannot create ${dir}: ${(err as { code?: string }).code ?? 'failed'}`,
      );
    }
    // Numbering continues after earlier requests in the folder, so a second run never overwrites one.
    let last = 0;
    for (const f of readdirSync(dir)) {
      const m = REQUEST.exec(f);
      if (m) last = Math.max(last, Number(m[1]));
    }
    this.#next = last + 1;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    if (request.signal?.aborted) throw abortedError('relay');
    const n = String(this.#next++).padStart(3, '0');
    const file = path.join(this.dir, `${n}.request.md`);
    const replyFile = path.join(this.dir, `${n}.reply.md`);
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, renderRequest(n, request, path.basename(replyFile)));
    renameSync(tmp, file);
    const text = await this.#waitFor(replyFile, request.signal);
    const input = [request.system, ...request.messages.map((m) => m.content)].join('\n');
    return {
      text,
      usage: { inputTokens: this.#count(input), outputTokens: this.#count(text) },
      model: this.spec,
      stopReason: 'relay',
    };
  }

  /** Waits until the reply exists and its size has stopped changing (a writer may still be saving it). */
  async #waitFor(file: string, signal: AbortSignal | undefined): Promise<string> {
    const poll = this.#opts.pollMs ?? 250;
    const deadline = Date.now() + (this.#opts.timeoutMs ?? 3_600_000);
    let lastSize = -1;
    for (;;) {
      if (signal?.aborted) throw abortedError('relay');
      if (existsSync(file)) {
        const size = statSync(file).size;
        if (size === lastSize) return readFileSync(file, 'utf8').replace(/\n$/, '');
        lastSize = size;
      }
      if (Date.now() > deadline) {
        throw new RlmError('PROVIDER', `relay: no reply in ${path.basename(file)} before the timeout`);
      }
      await sleep(poll, signal);
    }
  }
}

/** The request as Markdown: what a human or an agent needs to answer it, and where to put the answer. */
function renderRequest(n: string, request: ModelRequest, replyName: string): string {
  const parts = [
    `# Request ${n} (depth ${request.depth}${request.span ? `, span ${request.span}` : ''})`,
    '',
    `Write the model's reply, exactly as the model would, to \`${replyName}\` in this folder.`,
    '',
    '## System prompt',
    '',
    request.system,
    '',
  ];
  for (const [i, m] of request.messages.entries()) {
    parts.push(`## Message ${i + 1}: ${m.role}`, '', m.content, '');
  }
  return parts.join('\n');
}
