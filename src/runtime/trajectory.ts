/**
 * The recursion tree of a run, rebuilt from its trace events: the root span's turns, each turn's blocks
 * with their output, and under each block the sub-calls it made, each a span of its own. Blob references
 * are resolved, so every text is whole. One tree serves `rlm trace show --json`, `rlm trace html` and
 * `RlmResult.trajectory`.
 */
import type { BlockNode, SpanNode, Totals, Trajectory, TurnNode } from './result.ts';
import type { TraceEvent, TraceMessage } from './trace.ts';

const zero = (): Totals => ({ inputTokens: 0, outputTokens: 0, costUsd: 0, modelCalls: 0, subCalls: 0 });

function newSpan(
  id: string,
  depth: number,
  kind: SpanNode['kind'],
  prompt: string,
  startMs: number,
): SpanNode {
  return { id, depth, kind, prompt, status: 'unfinished', startMs, turns: [], errors: [], totals: zero() };
}

/** Builds one tree per run, in the order runs first appear. */
export function buildTrajectories(events: TraceEvent[]): Trajectory[] {
  const byRun = new Map<string, TraceEvent[]>();
  for (const e of events) {
    const list = byRun.get(e.run) ?? [];
    list.push(e);
    byRun.set(e.run, list);
  }
  return [...byRun.values()].map(buildTrajectory);
}

/** Builds the tree of one run's events (all with the same `run`). */
export function buildTrajectory(events: TraceEvent[]): Trajectory {
  const blobs = new Map<string, string>();
  for (const e of events) if (e.type === 'blob') blobs.set(e.id, e.text);
  const text = (id: string | undefined, fallback: string): string =>
    id === undefined ? fallback : (blobs.get(id) ?? fallback);

  const run = events[0]?.run ?? '';
  const traj: Trajectory = { run, question: '', root: newSpan('root', 0, 'root', '', 0) };
  const spans = new Map<string, SpanNode>([['root', traj.root]]);
  const span = (id: string, depth: number): SpanNode => {
    let s = spans.get(id);
    if (s === undefined) {
      // Events of a span whose start was not recorded (a torn file): keep them, under no parent.
      s = newSpan(id, depth, 'rlm', '', 0);
      spans.set(id, s);
    }
    return s;
  };
  const lastTurn = (s: SpanNode): TurnNode | undefined => s.turns[s.turns.length - 1];
  const lastBlock = (s: SpanNode): BlockNode | undefined => {
    const t = lastTurn(s);
    return t?.blocks[t.blocks.length - 1];
  };
  // The conversation each span has sent so far, to expand `replyOf` references.
  const replies = new Map<string, Map<number, string>>();

  for (const e of events) {
    switch (e.type) {
      case 'run_start':
        Object.assign(traj, {
          time: e.time,
          question: e.question,
          model: e.model,
          subModel: e.subModel,
          maxDepth: e.maxDepth,
          maxIterations: e.maxIterations,
          context: e.context,
        });
        traj.root.prompt = e.question;
        break;
      case 'model_request': {
        const s = span(e.span, e.depth);
        if (e.system !== undefined) s.system = text(e.system, '');
        const own = replies.get(e.span);
        const messages = e.messages.map((m: TraceMessage) => ({
          role: m.role,
          content:
            m.replyOf !== undefined
              ? (own?.get(m.replyOf) ?? '')
              : m.blob !== undefined
                ? text(m.blob, '')
                : (m.text ?? ''),
        }));
        s.turns.push({
          iteration: e.iteration,
          kind: e.kind,
          startMs: e.t,
          request: { from: e.from, messages },
          blocks: [],
        });
        break;
      }
      case 'model_call': {
        const s = span(e.span, e.depth);
        let t = lastTurn(s);
        if (t === undefined || t.reply !== undefined || t.iteration !== e.iteration || t.kind !== e.kind) {
          t = { iteration: e.iteration, kind: e.kind, startMs: e.t - e.durationMs, blocks: [] };
          s.turns.push(t);
        }
        Object.assign(t, {
          model: e.model,
          durationMs: e.durationMs,
          usage: e.usage,
          costUsd: e.costUsd,
          reply: e.reply,
        });
        const own = replies.get(e.span) ?? new Map<number, string>();
        own.set(e.iteration, e.reply);
        replies.set(e.span, own);
        break;
      }
      case 'block': {
        const s = span(e.span, e.depth);
        let t = lastTurn(s);
        if (t === undefined) {
          t = { iteration: e.iteration, kind: 'turn', startMs: e.t, blocks: [] };
          s.turns.push(t);
        }
        t.blocks.push({ index: e.index, code: e.code, startMs: e.t, subcalls: [] });
        break;
      }
      case 'output': {
        const b = lastBlock(span(e.span, e.depth));
        if (b !== undefined) {
          const { type: _t, run: _r, t: _time, span: _s, depth: _d, iteration: _i, index: _x, ...output } = e;
          b.output = output;
        }
        break;
      }
      case 'subcall_start': {
        const caller = span(e.span, e.depth);
        const child = newSpan(e.id, e.calleeDepth, e.kind, text(e.promptBlob, e.prompt), e.t);
        child.contextChars = e.contextChars;
        child.cached = e.cached;
        spans.set(e.id, child);
        let b = lastBlock(caller);
        if (b === undefined) {
          // Not made from a block (should not happen): hang it on a placeholder so it is not lost.
          b = { index: 0, code: '', startMs: e.t, subcalls: [] };
          const t = lastTurn(caller) ?? { iteration: 0, kind: 'turn' as const, startMs: e.t, blocks: [] };
          if (caller.turns.length === 0) caller.turns.push(t);
          t.blocks.push(b);
        }
        b.subcalls.push(child);
        break;
      }
      case 'subcall_end': {
        const child = span(e.id, e.calleeDepth);
        child.endMs = e.t;
        child.status = e.ok ? (e.status ?? (e.cached ? 'cached' : 'ok')) : 'error';
        child.answer = text(e.answerBlob, e.answer);
        if (e.error !== undefined) child.error = e.error;
        break;
      }
      case 'final':
        span(e.span, e.depth).final = { source: e.source, answer: e.answer };
        break;
      case 'error':
        span(e.span, e.depth).errors.push({ code: e.code, message: e.message });
        break;
      case 'run_end': {
        // run_end repeats a long answer cut short; the root's final event holds it whole.
        const whole = traj.root.final?.answer;
        traj.result = whole === undefined ? e.result : { ...e.result, answer: whole };
        traj.root.endMs = e.t;
        traj.root.status = e.result.status;
        traj.root.answer = traj.result.answer;
        if (e.result.error !== undefined) traj.root.error = e.result.error;
        break;
      }
      default:
        break;
    }
  }
  const last = events[events.length - 1];
  if (traj.root.endMs === undefined && last !== undefined) traj.root.endMs = last.t;
  total(traj.root);
  return traj;
}

/** Fills `totals` bottom-up. */
function total(s: SpanNode): Totals {
  const t = zero();
  for (const turn of s.turns) {
    if (turn.usage !== undefined) {
      t.inputTokens += turn.usage.inputTokens;
      t.outputTokens += turn.usage.outputTokens;
      t.modelCalls++;
    }
    t.costUsd += turn.costUsd ?? 0;
    for (const b of turn.blocks) {
      for (const c of b.subcalls) {
        const ct = total(c);
        t.inputTokens += ct.inputTokens;
        t.outputTokens += ct.outputTokens;
        t.costUsd += ct.costUsd;
        t.modelCalls += ct.modelCalls;
        t.subCalls += ct.subCalls + 1;
      }
    }
  }
  t.costUsd = Math.round(t.costUsd * 1e6) / 1e6;
  s.totals = t;
  return t;
}

/**
 * The three times a run reports, which differ and must be told apart: `totalMs`, the whole
 * `answer()` call (`RlmResult.elapsedMs`); `runMs`, the run itself on the trace's clock, which starts
 * once the models are created and the context is read and indexed (the tree and the timeline measure
 * this); and `setupMs`, the difference, spent before the run's clock started.
 */
export function runTimes(
  elapsedMs: number | undefined,
  runMs: number,
): { totalMs: number; runMs: number; setupMs: number } {
  const totalMs = Math.max(elapsedMs ?? runMs, runMs);
  return { totalMs, runMs, setupMs: totalMs - runMs };
}
