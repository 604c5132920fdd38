/**
 * `rlm exec [FILE|-] [--context PATH]... [--store DIR] [--model SPEC] [--json]`: runs JavaScript in a
 * fresh sandbox session with the model's globals — the REPL the model gets, from the command line.
 */

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { readEnv } from '../../../core/env.ts';
import { isRlmError, RlmError } from '../../../core/errors.ts';
import { withoutHostPaths } from '../../../core/host-paths.ts';
import { DEFAULT_MAX_CONTEXT_CHARS, type LoadedInput, loadInput } from '../../runtime/input.ts';
import type { ChatMessage, Model } from '../../runtime/model.ts';
import { modelAliases, modelName } from '../../runtime/model-name.ts';
import { resolveOptions } from '../../runtime/options.ts';
import { MODEL_SPECS } from '../../runtime/providers/specs.ts';
import {
  askStructured,
  type CheckedSchema,
  checkSchema,
  structuredPrompt,
} from '../../runtime/structured.ts';
import { errorAnswer } from '../../runtime/subcalls.ts';
import type { SandboxHost, SubCallItem, SubCallOptions } from '../../sandbox/host.ts';
import { createSandbox } from '../../sandbox/session.ts';
import type { BlockError, BlockResult } from '../../sandbox/types.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_FAILURE, EXIT_OK, readStdin, shown, writeError, writeJson } from '../io.ts';

const HELP = `usage: rlm exec [FILE|-] [--context PATH]... [--store DIR] [--model SPEC [--max-output-tokens N]] [--json]

Runs JavaScript in a fresh sandbox session with the globals the model gets in \`rlm answer\`: context, peek,
grep, search_chunks, get_chunk, neighbors, list_documents, llm_query, rlm_query, llm_query_batched,
rlm_query_batched, FINAL, FINAL_VAR, print, console.
Code comes from FILE, or stdin with - (or no FILE). A line "// ---" splits FILE into blocks that run
one after the other in the same session, so declarations persist; a block that calls FINAL ends the run.

  --context PATH   a file or folder, loaded as \`rlm answer --context\` loads it (repeatable): its text is
                   \`context\` (an array for several documents) and its chunks back peek(id), grep,
                   search_chunks, get_chunk and neighbors
  --store DIR      a store built with \`rlm ingest\` (default: $RLM_STORE when no --context); \`context\`
                   is not loaded, read it with peek(id), grep, search_chunks, get_chunk and neighbors
  --model SPEC     model for llm_query and rlm_query (both one plain completion here: there is no RLM
                   loop); without it they fail. One of:
                   ${MODEL_SPECS}
  --max-output-tokens N  output token cap per sub-call reply (default: $RLM_MAX_OUTPUT_TOKENS)
  --json           print {ok, stdout, final, error:{code,message,line,column,block}|null,
                   stats:{cpuMs,wallMs}}, plus blocks:[{ok, stdout, final, error, stats, reset}] when
                   several blocks ran; ok is false and error is the first failed block's when any fails

Error positions count lines of FILE (1-based). Columns are 1-based in the messages on stderr (LINE:COL)
and 0-based in --json \`column\`; \`block\` is the 1-based number of the failed block.

Exit: 0 when every block succeeded, 1 when any block failed, 2 for a usage error.
`;

/** A line `// ---` (trailing spaces allowed) separates blocks. */
const SEPARATOR = /^\/\/ ---[ \t]*\r?$/;

/** One block of a file and the 1-based line of the file it starts on. */
export interface SourceBlock {
  code: string;
  line: number;
}

/** Splits a file into blocks at separator lines, keeping where each starts; a file without separators is one block. */
export function splitSourceBlocks(source: string): SourceBlock[] {
  const blocks: SourceBlock[] = [];
  let current: string[] = [];
  let start = 1;
  for (const [i, line] of source.split('\n').entries()) {
    if (SEPARATOR.test(line)) {
      blocks.push({ code: current.join('\n'), line: start });
      current = [];
      start = i + 2;
    } else {
      current.push(line);
    }
  }
  blocks.push({ code: current.join('\n'), line: start });
  return blocks.filter((b, i) => b.code.trim() !== '' || (blocks.length === 1 && i === 0));
}

/** Splits a file into blocks at separator lines; a file without separators is one block. */
export function splitBlocks(source: string): string[] {
  return splitSourceBlocks(source).map((b) => b.code);
}

async function readInput(file: string | undefined, io: CliIO): Promise<string> {
  if (file === undefined || file === '-') {
    if (file === undefined && (io.stdin as { isTTY?: boolean }).isTTY) {
      throw new RlmError('BAD_INPUT', 'exec: no code given; pass FILE, or - to read stdin (rlm exec --help)');
    }
    return readStdin(io);
  }
  return readText(path.resolve(io.cwd, file));
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new RlmError('BAD_INPUT', `exec: cannot read ${file}${code ? ` (${code})` : ''}`, { file });
  }
}

/**
 * Plain completions for llm_query and rlm_query (no RLM loop here, so both are one completion), so
 * `rlm exec --model` can try sub-calls. Only the one model given is available.
 */
function modelHost(
  model: Model,
  maxOutputTokens: number | undefined,
): Pick<SandboxHost, 'llmQuery' | 'llmQueryBatched'> {
  // What model code sees of this model and its failures: its name, no host path (runtime/model-name.ts).
  const name = modelName(model.spec);
  const forSandbox = (text: string) => withoutHostPaths(text, modelAliases(model.spec, name));
  const llmQuery = async (
    prompt: string,
    context: string | undefined,
    signal: AbortSignal,
    opts: SubCallOptions = {},
  ) => {
    if (opts.model !== undefined && opts.model !== model.spec && opts.model !== name) {
      return forSandbox(`Error: BAD_INPUT: no model "${opts.model}" is configured; use ${name}`);
    }
    const ask = async (messages: ChatMessage[]) => {
      try {
        const res = await model.complete({
          system: 'Answer the request directly and concisely, in the form it asks for.',
          messages,
          depth: 1,
          signal,
          ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
        });
        return res.text;
      } catch (err) {
        const message = forSandbox((err as Error)?.message ?? String(err));
        throw isRlmError(err) ? new RlmError(err.code, message) : new Error(message);
      }
    };
    let schema: CheckedSchema | undefined;
    try {
      if (opts.schema !== undefined) schema = checkSchema(opts.schema);
    } catch (err) {
      return `Error: BAD_INPUT: ${(err as Error).message}`;
    }
    const asked = schema === undefined ? prompt : structuredPrompt(prompt, schema);
    const content = context === undefined ? asked : `${asked}\n\n${context}`;
    try {
      return schema === undefined
        ? await ask([{ role: 'user', content }])
        : await askStructured(ask, content, schema);
    } catch (err) {
      // As in a run (runtime/subcalls.ts): a failed sub-call is an answer starting `Error:`, not an
      // exception, so code tried here behaves as it will under rlm answer.
      if (isRlmError(err, 'ABORTED')) throw err;
      return errorAnswer(err, forSandbox);
    }
  };
  const llmQueryBatched = async (items: SubCallItem[], signal: AbortSignal) => {
    const out: string[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        const item = items[i] as SubCallItem;
        try {
          const opts: SubCallOptions = {};
          if (item.model !== undefined) opts.model = item.model;
          if (item.schema !== undefined) opts.schema = item.schema;
          out[i] = await llmQuery(item.prompt, item.context, signal, opts);
        } catch (err) {
          out[i] = errorAnswer(err, forSandbox);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, items.length) }, worker));
    return out;
  };
  return { llmQuery, llmQueryBatched };
}

/** `line` of a block-relative error as a line of the file; the column (0-based) is unchanged. */
function inFile(e: BlockError, block: SourceBlock): BlockError {
  return e.line === undefined ? e : { ...e, line: block.line + e.line - 1 };
}

function jsonError(e: BlockError | null, block: SourceBlock): Record<string, unknown> | null {
  if (e === null) return null;
  const f = inFile(e, block);
  const out: Record<string, unknown> = { code: f.code, message: f.message };
  if (f.line !== undefined) out.line = f.line;
  if (f.column !== undefined) out.column = f.column;
  if (typeof f.rule === 'string') out.rule = f.rule;
  return out;
}

/** A block's error as an error line: file line and 1-based column, for people and editors. */
function writeBlockError(io: CliIO, e: BlockError, block: SourceBlock, index: number, blocks: number): void {
  const f = inFile(e, block);
  const where = f.line !== undefined ? ` at ${f.line}:${(f.column ?? 0) + 1}` : '';
  const which = blocks > 1 ? ` (block ${index + 1})` : '';
  writeError(io, `exec:${where}${which}: ${f.message}`, f.code);
}

/**
 * Loads --context paths (or --store, else $RLM_STORE) with `loadInput`, exactly as `rlm answer` does, so
 * the session sees the same `context`, chunk ids and store functions the model would.
 */
async function loadExecInput(
  contextPaths: string[],
  storeFlag: string | undefined,
  io: CliIO,
): Promise<LoadedInput> {
  const paths = contextPaths.map((p) => path.resolve(io.cwd, p));
  for (const p of paths)
    if (!existsSync(p)) throw new RlmError('BAD_INPUT', `--context: no such file or directory: ${p}`);
  if (paths.length > 0 && storeFlag !== undefined)
    throw new RlmError('BAD_INPUT', 'exec: give --context or --store, not both');
  // loadInput wants the run's question; exec has none, so a placeholder stands in.
  const question = 'rlm exec';
  if (paths.length > 0) return loadInput({ question, paths }, DEFAULT_MAX_CONTEXT_CHARS);
  if (!(storeFlag ?? readEnv(io.env).store)) return loadInput({ question }, DEFAULT_MAX_CONTEXT_CHARS);
  const { openStore } = await import('../store-arg.ts');
  const store = await openStore(storeFlag, io);
  try {
    const loaded = await loadInput({ question, store }, DEFAULT_MAX_CONTEXT_CHARS);
    return { ...loaded, close: () => store.close() };
  } catch (err) {
    await store.close();
    throw err;
  }
}

async function execute(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    context: { type: 'string', multiple: true },
    store: { type: 'string' },
    model: { type: 'string' },
    'max-output-tokens': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  if (positionals.length > 1)
    throw new RlmError('BAD_INPUT', `exec: unexpected argument '${positionals[1]}'`);
  const source = await readInput(positionals[0], io);
  const loaded = await loadExecInput(values.context ?? [], values.store, io);
  try {
    // As in the RLM loop: with neither context nor store, `context` is an empty string.
    const context = loaded.context ?? (loaded.store === undefined ? '' : undefined);
    const host: SandboxHost = {
      ...(context === undefined ? {} : { context }),
      ...(loaded.store === undefined ? {} : { store: loaded.store }),
      ...(loaded.documents === undefined ? {} : { documents: loaded.documents }),
      ...(loaded.contextFiles === undefined ? {} : { contextFiles: loaded.contextFiles }),
    };
    if (values.model !== undefined) {
      const { createModel } = await import('../../runtime/providers/index.ts');
      const flag = intFlag(values['max-output-tokens'], '--max-output-tokens', 1);
      const maxOutputTokens = flag ?? resolveOptions({ model: values.model, env: io.env }).maxOutputTokens;
      Object.assign(host, modelHost(createModel(values.model, { env: io.env }), maxOutputTokens));
    } else if (values['max-output-tokens'] !== undefined) {
      throw new RlmError('BAD_INPUT', 'exec: --max-output-tokens needs --model');
    }
    const sandbox = await createSandbox(host);
    const results: BlockResult[] = [];
    const blocks = splitSourceBlocks(source);
    try {
      for (const [i, block] of blocks.entries()) {
        const r = await sandbox.run(block.code);
        results.push(r);
        if (!values.json) {
          io.stdout.write(shown(io.stdout, r.stdout));
          if (r.error) writeBlockError(io, r.error, block, i, blocks.length);
        }
        if (r.final !== null) break;
      }
    } finally {
      sandbox.dispose();
    }
    const failed = results.findIndex((r) => !r.ok);
    const final = results.reduce<string | null>((f, r) => r.final ?? f, null);
    if (values.json) {
      const first = failed < 0 ? null : results[failed]!;
      const error = first === null ? null : jsonError(first.error, blocks[failed]!);
      const out: Record<string, unknown> = {
        ok: failed < 0,
        stdout: results.map((r) => r.stdout).join(''),
        final,
        error: error === null ? null : { ...error, block: failed + 1 },
        stats: {
          cpuMs: round(results.reduce((n, r) => n + r.stats.cpuMs, 0)),
          wallMs: round(results.reduce((n, r) => n + r.stats.wallMs, 0)),
        },
      };
      if (results.length > 1) {
        out.blocks = results.map((r, i) => ({
          ok: r.ok,
          stdout: r.stdout,
          final: r.final,
          error: jsonError(r.error, blocks[i]!),
          stats: r.stats,
          reset: r.reset,
        }));
      }
      writeJson(io, out);
    } else if (final !== null) {
      io.stdout.write(`FINAL: ${shown(io.stdout, final)}\n`);
    }
    return failed < 0 ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await loaded.close();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** The `rlm exec` command: its errors are reported by the CLI (main.ts), as every command's are. */
export default execute;
