/**
 * Consolidation of memories by a model: the seam between the store (which knows nothing of models) and
 * the providers. Used by `rlm consolidate`, automatic consolidation after `remember`, and the MCP tools.
 */
import type { Env } from '../../core/env.ts';
import { isRlmError, RlmError } from '../../core/errors.ts';
import type { Consolidation } from '../../memory/engine/memories.ts';
import type { Summarizer } from '../../memory/memories/memory-model.ts';
import type { Store } from '../../memory/store-api.ts';
import type { Model } from './model.ts';
import { createModel } from './providers/index.ts';

const SYSTEM = [
  "You consolidate an assistant's memories about one topic into a single memory.",
  'Keep every decision, preference, fact, name, number and date; merge repetitions; when two memories',
  'disagree, keep the newer one and say it replaced the older. Reply with the summary text only.',
].join(' ');

/** A {@link Summarizer} asking `model` for one summary of a topic's memories. */
export function modelSummarizer(model: Model, signal?: AbortSignal): Summarizer {
  return async (topic, memories) => {
    const list = memories
      .map((m, i) => `${i + 1}. [${m.created.slice(0, 10)}, ${m.importance}] ${m.text}`)
      .join('\n');
    const reply = await model.complete({
      system: SYSTEM,
      messages: [
        { role: 'user', content: `Topic: ${topic}\n\nMemories, oldest first:\n${list}\n\nSummary:` },
      ],
      depth: 0,
      ...(signal ? { signal } : {}),
    });
    return unwrapSummary(reply.text);
  };
}

/** Models like to fence or introduce their answer ("Sure! Here's the summary:"); the memory keeps the text. */
function unwrapSummary(text: string): string {
  let t = text.trim();
  const lead = /^[^\n]{0,100}:\s*\n\s*\n/.exec(t);
  if (lead) t = t.slice(lead[0].length).trim();
  const fenced = /^```[a-z]*\n([\s\S]*?)\n```$/.exec(t);
  if (fenced) t = fenced[1]!.trim();
  return t.replace(/^summary\s*:\s*/i, '').trim();
}

/**
 * Runs automatic consolidation of `topic` when the store's settings turn it on (a model spec) and the
 * topic has more active memories than the threshold. Returns what was done, or null.
 */
export async function autoConsolidate(
  store: Store,
  topic: string,
  opts: { env?: Env; now?: Date } = {},
): Promise<Consolidation | null> {
  const spec = (await store.memorySettings()).autoConsolidate;
  if (!spec || !(await store.needsConsolidation(topic, opts.now))) return null;
  const model = createModel(spec, { env: opts.env });
  try {
    return await store.consolidate(topic, modelSummarizer(model), opts.now ? { now: opts.now } : {});
  } catch (err) {
    // Another writer consolidated or changed the topic meanwhile: the next remember looks again.
    if (isRlmError(err, 'RUNTIME') && err.details?.topicChanged === true) return null;
    throw err;
  }
}

/** What automatic consolidation after a remember did: its result, or why it failed. */
export type AfterRemember =
  | { consolidated: Consolidation }
  | { consolidationError: { code: string; message: string } }
  | Record<string, never>;

/**
 * {@link autoConsolidate} after a memory is stored, for the CLI and the MCP tool: the memory is kept
 * whatever happens here, so a failure (a model that cannot be built or does not answer) is told beside
 * it, not thrown as if nothing had been done.
 */
export async function consolidateAfterRemember(
  store: Store,
  topic: string,
  opts: { env?: Env; now?: Date } = {},
): Promise<AfterRemember> {
  try {
    const done = await autoConsolidate(store, topic, opts);
    return done ? { consolidated: done } : {};
  } catch (err) {
    // A cancel (Ctrl-C, a cancelled MCP call) is the caller's to tell, not a failure of consolidation.
    if (isRlmError(err, 'ABORTED')) throw err;
    const e = err instanceof RlmError ? err : new RlmError('RUNTIME', (err as Error)?.message ?? String(err));
    return { consolidationError: { code: e.code, message: e.message } };
  }
}
