/**
 * Context documents a session loads into its isolate. The host registers each distinct document
 * once and gives it an id, kept a while after its last session lets go (`RETAIN_MS`, at most
 * `RETAIN_MAX` documents) so the next run over the same context finds it; an isolate process receives a document's text the first time one of its
 * sessions needs it and keeps its own shared copy (an isolated-vm ExternalCopy, see process/child.ts),
 * so a session rebuilt on the same process, or a later session reusing it, loads the context in
 * microseconds. Entries are reference-counted by the sessions holding them.
 */

interface Entry {
  id: string;
  refs: number;
  /** Set while the entry is kept after its last release. */
  expiry: ReturnType<typeof setTimeout> | null;
}

const RETAIN_MS = 60_000;
const RETAIN_MAX = 4;
/**
 * Ids count across every cache of the process: isolate processes are shared, and one keeps a document by
 * its id, so two caches must never give the same id to different texts.
 */
let lastId = 0;

/** A session's hold on its documents. */
export interface SharedContext {
  readonly documents: readonly string[];
  /** Id of each document, in order. */
  readonly ids: readonly string[];
  /** Total characters. */
  readonly chars: number;
  /** Drops the hold; idempotent. */
  release(): void;
}

export class ContextCache {
  private readonly entries = new Map<string, Entry>();
  /** Released entries still kept, oldest first. */
  private readonly retained: string[] = [];

  /** Registers each document not already held and returns a handle on their ids. */
  acquire(documents: readonly string[]): SharedContext {
    const held: Entry[] = [];
    for (const doc of documents) {
      let entry = this.entries.get(doc);
      if (entry === undefined) {
        entry = { id: String(++lastId), refs: 0, expiry: null };
        this.entries.set(doc, entry);
      } else if (entry.expiry !== null) {
        clearTimeout(entry.expiry);
        entry.expiry = null;
        this.retained.splice(this.retained.indexOf(doc), 1);
      }
      entry.refs++;
      held.push(entry);
    }
    let released = false;
    const chars = documents.reduce((n, d) => n + d.length, 0);
    return {
      documents,
      ids: held.map((e) => e.id),
      chars,
      release: () => {
        if (released) return;
        released = true;
        for (const [i, doc] of documents.entries()) this.drop(doc, held[i]!);
      },
    };
  }

  /** Documents currently held by a session (for tests and diagnostics). */
  get size(): number {
    return this.entries.size - this.retained.length;
  }

  private drop(doc: string, entry: Entry): void {
    if (--entry.refs > 0 || this.entries.get(doc) !== entry) return;
    entry.expiry = setTimeout(() => this.forget(doc), RETAIN_MS);
    entry.expiry.unref();
    this.retained.push(doc);
    if (this.retained.length > RETAIN_MAX) this.forget(this.retained[0]!);
  }

  private forget(doc: string): void {
    const entry = this.entries.get(doc);
    if (entry === undefined || entry.refs > 0) return;
    clearTimeout(entry.expiry ?? undefined);
    this.entries.delete(doc);
    const i = this.retained.indexOf(doc);
    if (i !== -1) this.retained.splice(i, 1);
  }
}

/** The process-wide cache sessions use unless given another. */
export const sharedContexts = new ContextCache();

/** A context as documents: a string is one document, an array several. */
export function contextDocuments(context: string | readonly string[] | undefined): readonly string[] {
  if (context === undefined) return [];
  return typeof context === 'string' ? [context] : context;
}
