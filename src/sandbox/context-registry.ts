/**
 * Context documents a session loads into its isolate: texts, or sources the host reads them from (a
 * run's --context files, known by their key). The host registers each distinct document once and gives
 * it an id, kept a while after its last session lets go (`RETAIN_MS`, at most
 * `RETAIN_MAX` documents) so the next run over the same context finds it; an isolate process receives a document's text the first time one of its
 * sessions needs it and keeps its own shared copy (an isolated-vm ExternalCopy, see process/child.ts),
 * so a session rebuilt on the same process, or a later session reusing it, loads the context in
 * microseconds. Entries are reference-counted by the sessions holding them.
 */

import type { TextSource } from './host.ts';

/** A context document: its text, or where to read it. */
export type ContextDocument = string | TextSource;

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
  readonly documents: readonly ContextDocument[];
  /** Id of each document, in order. */
  readonly ids: readonly string[];
  /** Total characters. */
  readonly chars: number;
  /** Drops the hold; idempotent. */
  release(): void;
}

/**
 * Where an entry is filed: texts by themselves, sources by their key, in maps of their own (a text could
 * spell a key).
 */
interface Slot {
  map: Map<string, Entry>;
  key: string;
}

export class ContextCache {
  private readonly texts = new Map<string, Entry>();
  private readonly sources = new Map<string, Entry>();
  /** Released entries still kept, oldest first. */
  private readonly retained: Slot[] = [];

  private slot(doc: ContextDocument): Slot {
    return typeof doc === 'string' ? { map: this.texts, key: doc } : { map: this.sources, key: doc.key };
  }

  private retainedAt(slot: Slot): number {
    return this.retained.findIndex((r) => r.map === slot.map && r.key === slot.key);
  }

  /** Registers each document not already held and returns a handle on their ids. */
  acquire(documents: readonly ContextDocument[]): SharedContext {
    const held: Entry[] = [];
    for (const doc of documents) {
      const slot = this.slot(doc);
      let entry = slot.map.get(slot.key);
      if (entry === undefined) {
        entry = { id: String(++lastId), refs: 0, expiry: null };
        slot.map.set(slot.key, entry);
      } else if (entry.expiry !== null) {
        clearTimeout(entry.expiry);
        entry.expiry = null;
        this.retained.splice(this.retainedAt(slot), 1);
      }
      entry.refs++;
      held.push(entry);
    }
    let released = false;
    const chars = documents.reduce((n, d) => n + (typeof d === 'string' ? d.length : d.chars), 0);
    return {
      documents,
      ids: held.map((e) => e.id),
      chars,
      release: () => {
        if (released) return;
        released = true;
        for (const [i, doc] of documents.entries()) this.drop(this.slot(doc), held[i]!);
      },
    };
  }

  /** Documents currently held by a session (for tests and diagnostics). */
  get size(): number {
    return this.texts.size + this.sources.size - this.retained.length;
  }

  private drop(slot: Slot, entry: Entry): void {
    if (--entry.refs > 0 || slot.map.get(slot.key) !== entry) return;
    entry.expiry = setTimeout(() => this.forget(slot), RETAIN_MS);
    entry.expiry.unref();
    this.retained.push(slot);
    if (this.retained.length > RETAIN_MAX) this.forget(this.retained[0]!);
  }

  private forget(slot: Slot): void {
    const entry = slot.map.get(slot.key);
    if (entry === undefined || entry.refs > 0) return;
    clearTimeout(entry.expiry ?? undefined);
    slot.map.delete(slot.key);
    const i = this.retainedAt(slot);
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
