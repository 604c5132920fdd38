/**
 * `rlm claude recall --answer`: runs a recursive LM over the sessions recall found, each loaded as one
 * document (searchable in the sandbox through an in-memory store).
 */

import type { Env } from '../../core/env.ts';
import { RlmError } from '../../core/errors.ts';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { createModel } from '../runtime/providers/index.ts';
import { RLM } from '../runtime/rlm.ts';
import { answerResult } from '../shapes.ts';

/** The `rlm answer --json` object, plus the sessions the answer was drawn from. */
export type HistoryAnswer = ReturnType<typeof answerResult> & { sessions: string[] };

export async function answerOverSessions(
  question: string,
  sessions: { session: string; text: string }[],
  spec: string,
  env: Env,
): Promise<HistoryAnswer> {
  if (sessions.length === 0)
    throw new RlmError('NOT_FOUND', 'no imported session matches the query; nothing to answer over');
  const store = new MemoryChunkStore();
  try {
    for (const [i, s] of sessions.entries())
      await store.ingestText(`session-${i + 1}`, s.text, { chunker: 'turn' });
    const rlm = new RLM({ model: createModel(spec, { env }), env });
    const r = await rlm.answer({ question, context: sessions.map((s) => s.text), store });
    return { ...answerResult(r), sessions: sessions.map((s) => s.session) };
  } finally {
    await store.close();
  }
}
