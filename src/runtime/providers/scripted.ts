/**
 * `scripted:FILE` — a deterministic model driven by rules, for tests, demos and benchmark smoke runs
 * (format in CONTRACTS.md, "Model specs"). Each instance keeps its own `times` counters, so two models
 * built from the same rules do not share state.
 */
import { readFileSync } from 'node:fs';
import type * as z from 'zod';
import { RlmError } from '../../../core/errors.ts';
import { abortedError, sleep } from '../../../core/http-retry.ts';
import { zod } from '../lazy-zod.ts';
import type { Model, ModelRequest, ModelResponse } from '../model.ts';

/** The rules file's schemas, built with zod, which loads when a scripted model is first made. */
function buildSchemas() {
  const z = zod();
  const count = (what: string) =>
    z
      .number({ error: `"${what}" must be a non-negative integer` })
      .int({ error: `"${what}" must be a non-negative integer` })
      .min(0, { error: `"${what}" must be a non-negative integer` });
  /** One rule of a scripted model, as written in the rules file (the `scripted:FILE` format of CONTRACTS.md). */
  const rule = z
    .object(
      {
        depth: count('depth')
          .optional()
          .describe('Only calls at this recursion depth match (any depth when unset).'),
        match: z
          .string({ error: '"match" must be a string' })
          .refine(isRegex, { error: (issue) => `bad regex: ${regexError(issue.input as string)}` })
          .optional()
          .describe(
            'JS regex source, compiled with the `s` flag, tested against the last user message (any when unset).',
          ),
        reply: z
          .string({ error: '"reply" must be a string' })
          .describe("The reply; `$1`..`$9` are replaced by the match's groups."),
        times: count('times')
          .optional()
          .describe('How many calls this rule may answer (unlimited when unset).'),
        delayMs: z
          .number({ error: '"delayMs" must be a non-negative number' })
          .min(0, { error: '"delayMs" must be a non-negative number' })
          .optional()
          .describe('Sleep this long before answering: a slow model for benchmarks.'),
      },
      { error: 'must be an object' },
    )
    .strict();
  /** A rules file: `{"rules": [...]}`. */
  const rules = z.object(
    { rules: z.array(rule, { error: 'expected {"rules": [...]}' }) },
    { error: 'expected {"rules": [...]}' },
  );
  return { rule, rules };
}

type RuleSchemas = ReturnType<typeof buildSchemas>;
let schemas: RuleSchemas | undefined;

/** The schema of a rules file, `{"rules": [...]}` (built on first use). */
export function scriptRulesSchema(): RuleSchemas['rules'] {
  schemas ??= buildSchemas();
  return schemas.rules;
}

/** One rule of a scripted model, as written in the rules file; see {@link scriptRulesSchema}. */
export type ScriptRule = z.input<RuleSchemas['rule']>;

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
  return (await import('../../../memory/ingest/tokens.ts')).countTokens;
}

function lastUserMessage(request: ModelRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m?.role === 'user') return m.content;
  }
  return '';
}

function compileRules(input: unknown, where: string): CompiledRule[] {
  const parsed = scriptRulesSchema().safeParse(input);
  if (!parsed.success) {
    // The first problem, named as a user finds it in the file: "rules.json rule 3: "times" must be ...".
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    const [top, index] = issue.path;
    const rule = top === 'rules' && typeof index === 'number' ? index : undefined;
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')} (known: depth, match, reply, times, delayMs)`
        : rule === undefined && top === 'rules' && issue.path.length === 1
          ? 'expected {"rules": [...]}'
          : issue.message;
    throw new RlmError('BAD_INPUT', `${where}${rule === undefined ? '' : ` rule ${rule}`}: ${message}`, {
      source: where,
      ...(rule === undefined ? {} : { rule }),
    });
  }
  return parsed.data.rules.map((r) => ({
    depth: r.depth,
    regex: r.match === undefined ? undefined : new RegExp(r.match, 's'),
    reply: r.reply,
    left: r.times ?? Number.POSITIVE_INFINITY,
    delayMs: r.delayMs ?? 0,
  }));
}

function isRegex(source: string): boolean {
  return regexError(source) === undefined;
}

function regexError(source: string): string | undefined {
  try {
    new RegExp(source, 's');
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
