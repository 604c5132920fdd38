/**
 * `scripted:FILE` — a deterministic model driven by rules, for tests, demos and benchmark smoke runs
 * (format in DESIGN.md, "Model specs"). Each instance keeps its own `times` counters, so two models
 * built from the same rules do not share state.
 */
import { readFileSync } from 'node:fs';
import { RlmError } from '../../errors.ts';
import { abortedError, sleep } from '../../http-retry.ts';
import type { Model, ModelRequest, ModelResponse } from '../model.ts';

/** One rule of a scripted model, as written in the rules file. */
export interface ScriptRule {
  /** Only calls at this recursion depth match (any depth when unset). */
  depth?: number;
  /** JS regex source, compiled with the `s` flag, tested against the last user message (any when unset). */
  match?: string;
  /** The reply; `$1`..`$9` are replaced by the match's groups. */
  reply: string;
  /** How many calls this rule may answer (unlimited when unset). */
  times?: number;
  /** Sleep this long before answering: a slow model for benchmarks. */
  delayMs?: number;
}

export interface ScriptRules {
  rules: ScriptRule[];
}

export interface ScriptedModelOptions {
  /** Reported spec (default `scripted:<source>` or `scripted`). */
  spec?: string;
  /** Where the rules came from, named in error messages. */
  source?: string;
  /** Token counter for usage figures (default: the project tokenizer). */
  countTokens?: (text: string) => number;
}

interface CompiledRule {
  depth: number | undefined;
  regex: RegExp | undefined;
  reply: string;
  left: number;
  delayMs: number;
}

/** A {@link Model} that answers from a list of rules; see {@link ScriptRule}. */
export class ScriptedModel implements Model {
  readonly spec: string;
  readonly #rules: CompiledRule[];
  readonly #count: ((text: string) => number) | undefined;

  constructor(rules: ScriptRules | ScriptRule[], opts: ScriptedModelOptions = {}) {
    const where = opts.source ?? 'scripted rules';
    this.#rules = compileRules(Array.isArray(rules) ? { rules } : rules, where);
    this.spec = opts.spec ?? (opts.source ? `scripted:${opts.source}` : 'scripted');
    this.#count = opts.countTokens;
  }

  /** Loads and validates a rules file; problems are BAD_INPUT errors naming the file (and rule). */
  static fromFile(path: string, opts: Omit<ScriptedModelOptions, 'source'> = {}): ScriptedModel {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new RlmError('BAD_INPUT', `cannot read scripted model file ${path}: ${String(code ?? err)}`, {
        path,
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      // JSON.parse quotes the text around the fault; a file that is not a rules file (say /etc/passwd,
      // named by an MCP client) must not have its content echoed back, so only the position is kept.
      const at = /position (\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
      const where = at === undefined ? '' : ` (at position ${at})`;
      throw new RlmError('BAD_INPUT', `scripted model file ${path} is not valid JSON${where}`, { path });
    }
    return new ScriptedModel(parsed as ScriptRules, { ...opts, source: path });
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    if (request.signal?.aborted) throw abortedError('scripted');
    const last = lastUserMessage(request);
    for (const rule of this.#rules) {
      if (rule.left <= 0) continue;
      if (rule.depth !== undefined && rule.depth !== request.depth) continue;
      let groups: ReadonlyArray<string | undefined> = [];
      if (rule.regex) {
        const m = rule.regex.exec(last);
        if (!m) continue;
        groups = m;
      }
      rule.left--;
      if (rule.delayMs > 0) await sleep(rule.delayMs, request.signal, 'scripted');
      const text = rule.reply.replace(/\$([1-9])/g, (_, d: string) => groups[Number(d)] ?? '');
      const prompt = [request.system, ...request.messages.map((m) => m.content)].join('\n');
      const count = this.#count ?? (await projectTokenizer());
      return {
        text,
        usage: { inputTokens: count(prompt), outputTokens: count(text) },
        model: 'scripted',
        stopReason: 'end_turn',
      };
    }
    const preview = last.length > 80 ? `${last.slice(0, 80)}…` : last;
    throw new RlmError(
      'SCRIPT_EXHAUSTED',
      `no scripted rule matches the call at depth ${request.depth}: ${JSON.stringify(preview)}`,
      { depth: request.depth, message: preview },
    );
  }
}

/** The project tokenizer (tiktoken's WebAssembly), loaded at the first call rather than with `rlm`. */
async function projectTokenizer(): Promise<(text: string) => number> {
  return (await import('../../../memory/tokens.ts')).countTokens;
}

function lastUserMessage(request: ModelRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m?.role === 'user') return m.content;
  }
  return '';
}

function compileRules(input: unknown, where: string): CompiledRule[] {
  const bad = (msg: string, index?: number): RlmError =>
    new RlmError('BAD_INPUT', `${where}${index === undefined ? '' : ` rule ${index}`}: ${msg}`, {
      source: where,
      ...(index === undefined ? {} : { rule: index }),
    });
  if (!input || typeof input !== 'object' || !Array.isArray((input as ScriptRules).rules)) {
    throw bad('expected {"rules": [...]}');
  }
  return (input as ScriptRules).rules.map((raw: unknown, i) => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('must be an object', i);
    const r = raw as Record<string, unknown>;
    if (typeof r.reply !== 'string') throw bad('"reply" must be a string', i);
    if (r.depth !== undefined && !isNonNegativeInt(r.depth))
      throw bad('"depth" must be a non-negative integer', i);
    if (r.times !== undefined && !isNonNegativeInt(r.times))
      throw bad('"times" must be a non-negative integer', i);
    if (
      r.delayMs !== undefined &&
      !(typeof r.delayMs === 'number' && r.delayMs >= 0 && Number.isFinite(r.delayMs))
    ) {
      throw bad('"delayMs" must be a non-negative number', i);
    }
    let regex: RegExp | undefined;
    if (r.match !== undefined) {
      if (typeof r.match !== 'string') throw bad('"match" must be a string', i);
      try {
        regex = new RegExp(r.match, 's');
      } catch (err) {
        throw bad(`bad regex: ${err instanceof Error ? err.message : String(err)}`, i);
      }
    }
    return {
      depth: r.depth as number | undefined,
      regex,
      reply: r.reply,
      left: r.times === undefined ? Number.POSITIVE_INFINITY : (r.times as number),
      delayMs: (r.delayMs as number | undefined) ?? 0,
    };
  });
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}
