/*
 * The one path out of the isolate. The host function arrives as an isolated-vm Reference held only in
 * this module. Every call sends one JSON string and gets one JSON string back through
 * `applySyncPromise`, which blocks the isolate until the host's promise settles — so `llm_query('x')`
 * returns the answer with or without `await`, and the wait counts against the wall-clock limit but not
 * the CPU limit. Errors come back as data and are rethrown here as fresh isolate errors carrying only a
 * message.
 */
import { encode } from './encode.ts';
import { $Error, jsonParse, ReflectApply } from './intrinsics.ts';

/** The part of isolated-vm's Reference (to the host's handler) the prelude uses. */
export interface HostReference {
  applySyncPromise(receiver: undefined, args: [string]): unknown;
}

let hostRef: HostReference | null = null;
let applySyncPromise: HostReference['applySyncPromise'] | null = null;

/** Binds the host's Reference; its method is read once, here, while nothing else runs. */
export function bindHost(ref: HostReference): void {
  if (hostRef !== null) throw new $Error('already initialised');
  hostRef = ref;
  applySyncPromise = ref.applySyncPromise;
}

/** Sends `[op, payload]` to the host and returns its answer's value, or throws its error message. */
export function hostCall(op: string, payload: unknown): unknown {
  if (hostRef === null || applySyncPromise === null) throw new $Error(op + ': the sandbox has no host');
  const request = encode([op, payload]);
  const reply = ReflectApply(applySyncPromise, hostRef, [undefined, [request]]);
  if (typeof reply !== 'string') throw new $Error(op + ': the host gave no answer');
  const envelope = jsonParse(reply) as { ok?: unknown; value?: unknown; error?: unknown };
  if (envelope.ok === true) return envelope.value;
  throw new $Error(typeof envelope.error === 'string' ? envelope.error : op + ' failed');
}
