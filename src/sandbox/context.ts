/**
 * Context documents a session loads into its isolate. The host registers each distinct document
 * once and gives it an id; an isolate process receives a document's text the first time one of its
 * sessions needs it and keeps its own shared copy (an isolated-vm ExternalCopy, see process/child.ts),
 * so a session rebuilt on the same process, or a later session reusing it, loads the context in
 * microseconds. Entries are reference-counted by the sessions holding them.
 */

interface Entry {
  id: number;
  refs: number;
}

/** A session's hold on its documents. */
export interface SharedContext {
  readonly documents: readonly string[];
  /** Registry id of each document, in order. */
  readonly ids: readonly number[];
  /** Total characters. */
  readonly chars: number;
  /** Drops the hold; idempotent. */
  release(): void;
}

export class ContextCache {
  private readonly entries = new Map<string, Entry>();
  private nextId = 0;

  /** Registers each document not already held and returns a handle on their ids. */
  acquire(documents: readonly string[]): SharedContext {
    const held: Entry[] = [];
    for (const doc of documents) {
      let entry = this.entries.get(doc);
      if (entry === undefined) {
        entry = { id: ++this.nextId, refs: 0 };
        this.entries.set(doc, entry);
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

  /** Documents currently held (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private drop(doc: string, entry: Entry): void {
    if (--entry.refs > 0) return;
    if (this.entries.get(doc) === entry) this.entries.delete(doc);
  }
}

/** The process-wide cache sessions use unless given another. */
export const sharedContexts = new ContextCache();

/** A context as documents: a string is one document, an array several. */
export function contextDocuments(context: string | readonly string[] | undefined): readonly string[] {
  if (context === undefined) return [];
  return typeof context === 'string' ? [context] : context;
}
