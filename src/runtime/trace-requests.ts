/**
 * Records what each model request adds to its conversation (trace level `full`), so a trace holds every
 * request without repeating a growing conversation on every turn: per span, the system prompt once, then
 * only the messages that differ from the previous request. The model's own earlier reply is a reference
 * to its `model_call` event, and long texts are blobs stored once per run.
 */

import type { CallSite } from './call-site.ts';
import type { ChatMessage } from './model.ts';
import type { TraceMessage, Tracer } from './trace.ts';

interface SpanHistory {
  sent: ChatMessage[];
  /** Reply text → iteration of the model_call that returned it. */
  replies: Map<string, number>;
}

export class RequestRecorder {
  readonly #tracer: Tracer;
  readonly #spans = new Map<string, SpanHistory>();

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  /** Emits the `model_request` of a call about to be made. */
  request(site: CallSite, system: string, messages: ChatMessage[]): void {
    const t = this.#tracer;
    if (!t.full) return;
    const { span, depth } = site;
    let h = this.#spans.get(span);
    const first = h === undefined;
    if (h === undefined) {
      h = { sent: [], replies: new Map() };
      this.#spans.set(span, h);
    }
    let from = 0;
    while (
      from < h.sent.length &&
      from < messages.length &&
      h.sent[from]?.role === messages[from]?.role &&
      h.sent[from]?.content === messages[from]?.content
    )
      from++;
    const added: TraceMessage[] = messages.slice(from).map((m) => {
      const replyOf = m.role === 'assistant' ? h.replies.get(m.content) : undefined;
      if (replyOf !== undefined) return { role: m.role, replyOf };
      return { role: m.role, ...t.textRef(span, depth, m.content) };
    });
    h.sent = messages.slice();
    t.emit(span, depth, {
      type: 'model_request',
      iteration: site.iteration,
      kind: site.kind,
      ...(first ? { system: t.blob(span, depth, system) } : {}),
      from,
      messages: added,
    });
    // A leaf span makes one request only; nothing to remember.
    if (site.kind === 'leaf') this.#spans.delete(span);
  }

  /** Remembers a reply so the next request can point at it instead of repeating it. */
  replied(site: CallSite, text: string): void {
    this.#spans.get(site.span)?.replies.set(text, site.iteration);
  }

  /** Forgets a finished span. */
  end(span: string): void {
    this.#spans.delete(span);
  }
}
