/**
 * Turning what a block's run gave into its `BlockResult`: the isolate's own envelope, a compile error,
 * the CPU limit (output collected afterwards), a block left waiting, or a stop that ended the isolate
 * process. Fatal outcomes drop the process (the session gets a fresh one, `reset: true`) and keep the
 * output the block printed before the stop.
 */
import { compileError, type Envelope, parseEnvelope, thrownError } from './outcome.ts';
import { truncateOutput } from './output.ts';
import type { RunReply } from './process/protocol.ts';
import type { RewrittenBlock } from './rewrite.ts';
import type { BlockError, BlockResult } from './types.ts';

const RESET_NOTE = 'The sandbox was reset: variables and functions from earlier blocks are gone.';

export type StopCode = 'TIMEOUT' | 'ABORTED' | 'MEMORY_LIMIT';

/** Why the host stopped a block (wall clock, abort, dispose), if it did. */
export interface Stopped {
  code: StopCode;
  message: string;
}

/** How a run ended: the process answered, or the host gave up on it and it must be killed. */
export type Outcome =
  | { kind: 'reply'; reply: RunReply }
  | { kind: 'stuck'; code: StopCode | 'RUNTIME'; message: string };

/** Output and final of a block as the isolate's `collect` returns them. */
export interface Collected {
  stdout: string;
  final: string | null;
  inGrep: boolean;
}

export interface BlockRun {
  started: number;
  /** Set after a reset the model has not been told of yet. */
  notice: string;
  reset: boolean;
  file: string;
  block: RewrittenBlock;
  cpuLimitMs: number;
  memoryMb: number;
  maxOutputChars: number;
  hostCalls: () => number;
}

/** What finishing a block may need from the session. */
export interface FinishSeams {
  /** Output of a block the CPU limit stopped; null when even that failed. */
  collect(): Promise<Collected | null>;
  /** What the block printed before a stop, read from the output mirror ('' when unavailable). */
  salvage(): Promise<string>;
  /** Ends the isolate process: the session starts afresh. */
  drop(): void;
}

export function blockResult(
  run: Pick<BlockRun, 'started' | 'maxOutputChars' | 'hostCalls'>,
  cpuMs: number,
  part: { stdout?: string; final?: string | null; error?: BlockError | null; reset?: boolean },
): BlockResult {
  const error = part.error ?? null;
  return {
    ok: error === null,
    // The isolate already bounds its output; this guards the contract whatever comes back.
    stdout: truncateOutput(part.stdout ?? '', run.maxOutputChars + 200),
    final: part.final ?? null,
    error,
    stats: {
      cpuMs: Math.round(cpuMs * 100) / 100,
      wallMs: Math.round((performance.now() - run.started) * 100) / 100,
      hostCalls: run.hostCalls(),
    },
    reset: part.reset ?? false,
  };
}

function envelopeOf(value: string): Envelope {
  try {
    return parseEnvelope(value);
  } catch {
    return {
      stdout: '',
      final: null,
      error: { name: 'Error', message: 'the block returned an unreadable result', line: 0, column: 0 },
    };
  }
}

/** isolated-vm's word for an isolate it disposed for its memory limit. */
const MEMORY_DISPOSED = /^Isolate was disposed during execution due to memory limit/;

export async function finishBlock(
  outcome: Outcome,
  stopped: Stopped | null,
  run: BlockRun,
  seams: FinishSeams,
): Promise<BlockResult> {
  const { notice } = run;
  const cpuMs =
    outcome.kind === 'reply'
      ? outcome.reply.cpuMs
      : Math.min(performance.now() - run.started, run.cpuLimitMs);
  const fatal = async (code: string, message: string, salvage: boolean): Promise<BlockResult> => {
    const stdout = salvage ? await seams.salvage() : '';
    seams.drop();
    return blockResult(run, cpuMs, {
      stdout: notice + stdout,
      error: { code, message: `${message}. ${RESET_NOTE}` },
      reset: true,
    });
  };

  if (outcome.kind === 'stuck') return fatal(outcome.code, outcome.message, true);
  const reply = outcome.reply;

  if (reply.kind === 'compileError') {
    const err = Object.assign(new Error(reply.message), { name: reply.name });
    // Disposed for its memory limit before the block could start: by what earlier blocks keep, or by a
    // step of the last one that passed the limit as it ended.
    if (MEMORY_DISPOSED.test(reply.message))
      return fatal(
        'MEMORY_LIMIT',
        `memory limit of ${run.memoryMb} MB reached before this block could start (by what earlier blocks keep in variables)`,
        true,
      );
    if (reply.disposed) return fatal('RUNTIME', 'the sandbox stopped unexpectedly', false);
    return blockResult(run, 0, {
      stdout: notice,
      error: compileError(err, run.file, run.block),
      reset: run.reset,
    });
  }

  if (reply.kind === 'done') {
    const env = envelopeOf(reply.value);
    let error: BlockError | null = env.error ? thrownError(env.error, run.block) : null;
    if (stopped) {
      error = {
        code: stopped.code,
        message: stopped.message + (error ? `; the block ended with ${error.message}` : ''),
      };
    }
    return blockResult(run, cpuMs, {
      stdout: notice + env.stdout,
      final: env.final,
      error,
      reset: run.reset,
    });
  }

  if (reply.kind === 'pending') {
    // Everything a block can await settles in its own microtasks (host calls are synchronous), so a
    // block still pending once its call returned waits on a promise nothing will settle. The isolate
    // itself is fine: the block is reported and left behind, the session kept.
    const partial = await seams.collect();
    if (partial === null) return fatal('RUNTIME', 'the sandbox stopped unexpectedly', true);
    const text =
      'the block waits on a promise that never settles (nothing is left to resolve it; host calls such as llm_query return at once)';
    return blockResult(run, cpuMs, {
      stdout: notice + partial.stdout,
      final: partial.final,
      error: { code: stopped?.code ?? 'RUNTIME', message: stopped ? `${stopped.message}; ${text}` : text },
      reset: run.reset,
    });
  }

  // isolated-vm's own failures, told apart by their exact wording.
  const message = reply.message;
  if (MEMORY_DISPOSED.test(message)) {
    return fatal('MEMORY_LIMIT', `memory limit of ${run.memoryMb} MB reached`, true);
  }
  if (
    reply.disposed ||
    /^(Isolate was disposed during execution|Isolated? is disposed|Promise was abandoned)/.test(message)
  ) {
    if (stopped) return fatal(stopped.code, stopped.message, true);
    return fatal('RUNTIME', 'the sandbox stopped unexpectedly', false);
  }
  if (/^Script execution timed out\.$/.test(message)) {
    // Also flushes what isolated-vm skipped when the limit stopped the call (see callEntry).
    const partial = await seams.collect();
    if (partial === null) return fatal('TIMEOUT', `CPU time limit of ${run.cpuLimitMs} ms reached`, true);
    const text = partial.inGrep
      ? `CPU time limit of ${run.cpuLimitMs} ms reached inside grep: simplify the pattern (avoid nested quantifiers such as (a+)+)`
      : `CPU time limit of ${run.cpuLimitMs} ms reached (an endless loop, or too much work for one block)`;
    return blockResult(run, cpuMs, {
      stdout: notice + partial.stdout,
      final: partial.final,
      error: { code: stopped?.code ?? 'TIMEOUT', message: stopped ? `${stopped.message}; ${text}` : text },
      reset: run.reset,
    });
  }
  // Nothing else is expected (the prelude's entry points catch everything): start afresh.
  if (stopped) return fatal(stopped.code, stopped.message, true);
  return fatal('RUNTIME', 'the sandbox stopped unexpectedly', true);
}
