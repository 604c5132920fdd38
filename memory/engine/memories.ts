/**
 * Memories for assistants, kept in the chunk graph itself: a memory is a one-chunk document whose record
 * carries `memory: {topic, importance, source, archivedAt?}`, so search, grep, the sandbox and
 * `rlm answer` see memories like any other chunk. `remember` appends one fsynced line to the memory
 * journal under the write lock (O(1) however big the store); every `foldEvery` memories, or before any
 * other memory write, the journal is folded into an ordinary segment. Access counts live in the store's
 * access stats. Weights are computed, never stored (memory/memories/memory-model.ts).
 */
import { RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import { memoryPending } from '../ingest/prepare.ts';
import {
  type Consolidation,
  checkRemember,
  DEFAULT_MEMORY_SETTINGS,
  type DeleteReport,
  fadedOut,
  type JournalEntry,
  journalName,
  type Memory,
  type MemoryTotals,
  memoryDocId,
  memoryWeight,
  mergeSettings,
  type RecallHit,
  type RecallOptions,
  type RememberInput,
  recallScore,
  type Summarizer,
  summarizeTopic,
  type TopicSummary,
  topicChanged,
  type WeightInput,
} from '../memories/memory-model.ts';
import type { DocumentRecord, Link, MemorySettings } from '../types.ts';
import { BaseStore } from './base-store.ts';
import type { DocumentCatalog } from './catalog.ts';
import { MAX_TAIL } from './memory-tail.ts';
import type { CommittedState } from './persistence.ts';

export type {
  Consolidation,
  DeleteReport,
  Memory,
  MemoryTotals,
  RecallHit,
  RecallOptions,
  Summarizer,
  TopicSummary,
};

/** Memories per commit in {@link RememberingStore.rememberMany}. */
const BULK_COMMIT = 10_000;

/** Creation times parsed once per record: weights are computed for many memories per call. */
const created = new WeakMap<DocumentRecord, number>();
function createdMs(doc: DocumentRecord): number {
  let ms = created.get(doc);
  if (ms === undefined) {
    ms = Date.parse(doc.ingestedAt);
    created.set(doc, ms);
  }
  return ms;
}

/** Journal bytes at which a remember folds it whatever its line count: about a segment's text. */
export const JOURNAL_FOLD_BYTES = 4 * 1024 * 1024;

/**
 * The chunk graph with memories: {@link ChunkStore} and {@link MemoryChunkStore} extend it, so every store
 * can remember, recall, decay, archive, restore, forget and consolidate.
 */
export class RememberingStore extends BaseStore {
  /** The store's memory settings (defaults until set). */
  memorySettings(): MemorySettings {
    return this.state.memory?.settings ?? DEFAULT_MEMORY_SETTINGS;
  }

  /** Changes memory settings (checked; BAD_INPUT names a bad value) and saves them in the store. */
  async configureMemory(patch: Partial<MemorySettings>): Promise<MemorySettings> {
    const settings = mergeSettings(this.memorySettings(), patch);
    if (settings.foldEvery > MAX_TAIL / 2)
      throw new RlmError('BAD_INPUT', `foldEvery must be at most ${MAX_TAIL / 2}`);
    return this.exclusive('memory-config', async () => {
      await this.fold();
      const journal = this.state.memory?.journal ?? journalName(this.state.generation + 1);
      await this.commit({
        ...this.state,
        generation: this.state.generation + 1,
        memory: { journal, settings },
      });
      return settings;
    });
  }

  /** Stores one memory. Bad input throws BAD_INPUT before anything is written. */
  async remember(input: RememberInput): Promise<Memory> {
    const entry = checkRemember(input);
    await this.exclusive(
      'remember',
      async () => {
        if (!this.state.memory) {
          const memory = {
            journal: journalName(this.state.generation + 1),
            settings: DEFAULT_MEMORY_SETTINGS,
          };
          await this.commit({ ...this.state, generation: this.state.generation + 1, memory });
        }
        const journal = this.state.memory!.journal;
        const end = await this.persistence.appendJournal(journal, this.tail.end, JSON.stringify(entry));
        this.tail.add([entry], end);
        this.graph.update(this.tail.view(this.state));
        // Vectors are only searched through the index, so with an embedder a memory is folded at once. Every
        // open reads the whole journal: it is folded by its bytes too, or 1000 memories of 1 MiB would make
        // each command read a gigabyte first.
        if (
          this.tail.size >= this.memorySettings().foldEvery ||
          this.tail.end >= JOURNAL_FOLD_BYTES ||
          this.vectors
        )
          await this.fold();
      },
      input.signal,
    );
    return this.memoryOf(this.graph.document(entry.id)!, (input.now ?? new Date()).getTime());
  }

  /**
   * Stores many memories at once (an import): every input is checked first (BAD_INPUT names the first bad
   * one, nothing written), then they are written straight into segments, one commit per 10 000.
   */
  async rememberMany(inputs: RememberInput[]): Promise<string[]> {
    const entries = inputs.map((input, i) => {
      try {
        return checkRemember(input);
      } catch (err) {
        if (err instanceof RlmError) throw new RlmError(err.code, `memory ${i + 1}: ${err.message}`);
        throw err;
      }
    });
    await this.exclusive('remember', async () => {
      if (!this.state.memory) {
        const memory = { journal: journalName(this.state.generation + 1), settings: DEFAULT_MEMORY_SETTINGS };
        await this.commit({ ...this.state, generation: this.state.generation + 1, memory });
      }
      for (let i = 0; i < entries.length; i += BULK_COMMIT)
        await this.fold(entries.slice(i, i + BULK_COMMIT));
    });
    return entries.map((e) => e.id);
  }

  /**
   * Moves journaled memories into a segment (one commit). Entries in `without` are left out, so they
   * leave the store with the journal, which the commit replaces by a new, empty one. Call under the lock.
   */
  protected async fold(
    extra: JournalEntry[] = [],
    patch: (next: CommittedState) => CommittedState = (n) => n,
    without: ReadonlySet<string> = new Set(),
  ): Promise<void> {
    // Folding replaces the journal: a damaged line in it would go with it, and its memory for good.
    if (this.tail.damaged > 0)
      throw new RlmError(
        'STORE_CORRUPT',
        `the memory journal ${this.tail.journal} is corrupt: ${plural(this.tail.damaged, 'line is', 'lines are')} not a memory; ` +
          'nothing was written. Run `rlm repair` on the store: it lists the memories it cannot keep, and keeps the rest',
        { file: this.tail.journal },
      );
    const entries = [...this.tail.all(), ...extra].filter((e) => !without.has(e.id));
    if (entries.length === 0) {
      if (without.size === 0 || !this.state.memory) return;
      const generation = this.state.generation + 1;
      await this.commit({
        ...this.state,
        generation,
        memory: { ...this.state.memory, journal: journalName(generation) },
      });
      return;
    }
    await this.writeBatch(
      entries.map(memoryPending),
      {},
      {
        patch: (next) =>
          patch({ ...next, memory: { ...next.memory!, journal: journalName(next.generation) } }),
      },
    );
  }

  /** A memory by id (`mem-…` or `mem-…:0`), archived or not. */
  getMemory(id: string, now: Date = new Date()): Promise<Memory | undefined> {
    return this.reading(() => {
      const doc = this.graph.document(memoryDocId(id));
      return doc?.memory ? this.memoryOf(doc, now.getTime()) : undefined;
    });
  }

  /** Every memory (optionally of one topic), newest first. */
  listMemories(opts: { topic?: string; archived?: boolean; now?: Date } = {}): Promise<Memory[]> {
    return this.reading(() => {
      const nowMs = (opts.now ?? new Date()).getTime();
      const out: Memory[] = [];
      for (const doc of this.graph.documents()) {
        if (!doc.memory || (opts.topic !== undefined && doc.memory.topic !== opts.topic)) continue;
        const m = this.memoryOf(doc, nowMs);
        if (!m.archived || opts.archived) out.push(m);
      }
      return out.sort((a, b) => b.created.localeCompare(a.created));
    });
  }

  /** Memories ranked by relevance × weight × recency; counts as an access of those returned. */
  recall(query: string, opts: RecallOptions = {}): Promise<RecallHit[]> {
    return this.reading(() => this.recallOnce(query, opts));
  }

  private async recallOnce(query: string, opts: RecallOptions): Promise<RecallHit[]> {
    const k = opts.k ?? 10;
    if (!Number.isInteger(k) || k < 1)
      throw new RlmError('BAD_INPUT', `k must be a positive integer, got ${k}`);
    const nowMs = (opts.now ?? new Date()).getTime();
    const settings = this.memorySettings();
    const sinceMs = opts.since?.getTime() ?? -Infinity;
    const untilMs = opts.until?.getTime() ?? Infinity;
    const where = (doc: DocumentRecord): boolean => {
      const at = createdMs(doc);
      if (at < sinceMs || at > untilMs) return false;
      return opts.archived === true || !fadedOut(this.weightInput(doc), nowMs, settings);
    };
    // Candidates beyond k, so a heavier or newer memory a little lower by relevance can move up.
    const hits = await this.search(query, {
      k: Math.max(30, k * 3),
      type: 'memory',
      ...(opts.topic !== undefined ? { topic: opts.topic } : {}),
      ...(opts.tags && opts.tags.length > 0 ? { tags: opts.tags } : {}),
      archived: opts.archived === true,
      where,
      touch: false,
    });
    const best = hits[0]?.score ?? 0;
    const ranked = hits.map((h) => {
      const doc = this.graph.document(h.document)!;
      const relevance = best > 0 ? h.score / best : 0;
      const weight = memoryWeight(this.weightInput(doc), nowMs, settings);
      return { doc, relevance, score: recallScore(relevance, weight, createdMs(doc), nowMs) };
    });
    ranked.sort((a, b) => b.score - a.score || createdMs(b.doc) - createdMs(a.doc));
    const out = ranked
      .slice(0, k)
      .map((r) => ({ ...this.memoryOf(r.doc, nowMs), relevance: r.relevance, score: r.score }));
    this.persistence.touch(
      out.map((m) => `${m.id}:0`),
      // An access is never in the future: a recall asked as of a later time (--now) counts as of now.
      Math.min(nowMs, Date.now()),
    );
    return out;
  }

  /** Topics with their active and archived memory counts, largest first. */
  topics(now: Date = new Date()): TopicSummary[] {
    const nowMs = now.getTime();
    const settings = this.memorySettings();
    const by = new Map<string, TopicSummary>();
    for (const doc of this.graph.documents()) {
      if (!doc.memory) continue;
      const t = by.get(doc.memory.topic) ?? { topic: doc.memory.topic, memories: 0, archived: 0 };
      if (this.isArchived(doc, nowMs, settings)) t.archived++;
      else t.memories++;
      by.set(t.topic, t);
    }
    return [...by.values()].sort((a, b) => b.memories - a.memories || a.topic.localeCompare(b.topic));
  }

  /** Totals for status reports. */
  memoryTotals(now: Date = new Date()): MemoryTotals {
    const topics = this.topics(now);
    return {
      memories: topics.reduce((n, t) => n + t.memories, 0),
      archived: topics.reduce((n, t) => n + t.archived, 0),
      topics: topics.length,
      journaled: this.tail.size,
    };
  }

  /** Really deletes memories and every link to or from them. NOT_FOUND (nothing deleted) for an unknown id. */
  async forgetMemories(ids: string[]): Promise<string[]> {
    const r = await this.deleteDocuments(ids, { memoriesOnly: true });
    return [...r.deleted, ...r.summaries];
  }

  /**
   * Deletes documents and memories for good (by id, memory id, or the path a file was ingested from; a
   * file's id takes all its parts), in as few commits as the journal allows. A consolidation summary
   * written from a deleted memory may repeat its text, so it is deleted too; the sources of every
   * summary deleted (so also of one named) come back from the archive. NOT_FOUND names unknown ids, and then nothing is deleted. With `memoriesOnly`,
   * ids that are not memories count as unknown.
   */
  deleteDocuments(idsOrPaths: string[], opts: { memoriesOnly?: boolean } = {}): Promise<DeleteReport> {
    return this.exclusive(opts.memoriesOnly ? 'forget' : 'rm', async () => {
      const docs = opts.memoriesOnly ? this.memoryDocs(idsOrPaths) : this.named(idsOrPaths);
      const deleted = [...new Set(docs.map((d) => d.id))];
      const { summaries, restored } = await this.forgetWithSummaries(docs);
      return { deleted, summaries, restored };
    });
  }

  /** The documents each of `names` names; NOT_FOUND for the ones naming none. */
  private named(names: string[]): DocumentRecord[] {
    const missing = names.filter((n) => this.namedNow(n).length === 0);
    if (missing.length > 0)
      throw new RlmError('NOT_FOUND', `no document ${missing.join(', ')}; nothing was deleted`, {
        ids: missing,
      });
    const byId = new Map(names.flatMap((n) => this.namedNow(n)).map((d) => [d.id, d]));
    return [...byId.values()];
  }

  protected override async forget(
    docs: DocumentRecord[],
    patch?: (documents: DocumentCatalog) => void,
  ): Promise<void> {
    await this.forgetWithSummaries(docs, patch);
  }

  /**
   * Deletes `docs`: journaled memories by folding the journal without them, the others (and the summaries
   * written from any deleted memory, transitively) in one more commit that also brings those summaries'
   * other sources back from the archive.
   */
  private async forgetWithSummaries(
    docs: DocumentRecord[],
    patch?: (documents: DocumentCatalog) => void,
  ): Promise<{ summaries: string[]; restored: string[] }> {
    const ids = new Set(docs.map((d) => d.id));
    const journaled = new Set(this.tail.all().flatMap((e) => (ids.has(e.id) ? [e.id] : [])));
    if (journaled.size > 0) await this.fold([], (n) => n, journaled);
    const summaries: string[] = [];
    for (let grew = true; grew; ) {
      grew = false;
      for (const l of this.state.manual) {
        const from = memoryDocId(l.from);
        if (l.type === 'summarizes' && ids.has(memoryDocId(l.to)) && !ids.has(from)) {
          ids.add(from);
          summaries.push(from);
          grew = true;
        }
      }
    }
    // Every summary deleted, named or taken with a source, gives its other sources back to recall.
    const gone = ids;
    const restored = [
      ...new Set(
        this.state.manual.flatMap((l) =>
          l.type === 'summarizes' && gone.has(memoryDocId(l.from)) && !ids.has(memoryDocId(l.to))
            ? [memoryDocId(l.to)]
            : [],
        ),
      ),
    ].filter((id) => this.state.documents.get(id)?.memory?.archivedAt !== undefined);
    const committed = [...ids].flatMap((id) =>
      journaled.has(id) ? [] : (this.state.documents.get(id) ?? []),
    );
    if (committed.length > 0 || patch || restored.length > 0) {
      await super.forget(committed, (documents) => {
        patch?.(documents);
        for (const id of restored) {
          const doc = documents.get(id)!;
          const { archivedAt: _, ...memory } = doc.memory!;
          documents.set(id, { ...doc, memory });
        }
      });
    }
    return { summaries, restored };
  }

  /** Archives memories whose weight fell under the prune threshold (critical ones never are). */
  decay(now: Date = new Date()): Promise<{ decayed: number; archived: string[] }> {
    return this.exclusive('decay', async () => {
      const nowMs = now.getTime();
      const settings = this.memorySettings();
      await this.fold();
      let decayed = 0;
      const archived: string[] = [];
      const documents = this.state.documents.copy();
      for (const doc of this.state.documents.values()) {
        if (!doc.memory || doc.memory.archivedAt !== undefined) continue;
        const input = this.weightInput(doc);
        if (memoryWeight(input, nowMs, settings) < 1) decayed++;
        if (fadedOut(input, nowMs, settings)) {
          documents.set(doc.id, { ...doc, memory: { ...doc.memory, archivedAt: now.toISOString() } });
          archived.push(doc.id);
        }
      }
      if (archived.length > 0)
        await this.commit({ ...this.state, generation: this.state.generation + 1, documents });
      return { decayed, archived };
    });
  }

  /** Brings archived memories back; restoring counts as an access, so they do not fade out at once. */
  restore(ids: string[], now: Date = new Date()): Promise<string[]> {
    return this.exclusive('restore', async () => {
      await this.fold();
      const docs = this.memoryDocs(ids);
      const documents = this.state.documents.copy();
      for (const doc of docs) {
        const { archivedAt: _, ...memory } = doc.memory!;
        documents.set(doc.id, { ...doc, memory });
      }
      if (docs.length > 0)
        await this.commit({ ...this.state, generation: this.state.generation + 1, documents });
      this.persistence.touch(
        docs.map((d) => `${d.id}:0`),
        now.getTime(),
      );
      return docs.map((d) => d.id);
    });
  }

  /**
   * Replaces a topic's active memories by one summary written by `summarize`: the summary is a new
   * memory with `summarizes` links to each source, and the sources are archived, in one commit (a crash
   * leaves the old state or the new one). Critical memories are left out and stay active. Returns the
   * summary memory's id (`summary`), its `text`, and the ids archived.
   */
  async consolidate(topic: string, summarize: Summarizer, opts: { now?: Date } = {}): Promise<Consolidation> {
    const now = opts.now ?? new Date();
    const { entry, sources } = await summarizeTopic(
      topic,
      await this.listMemories({ topic, now }),
      summarize,
      now,
    );
    return this.exclusive('consolidate', async () => {
      const live = sources.filter((m) => {
        const doc = this.graph.document(m.id);
        return doc?.memory && doc.memory.archivedAt === undefined;
      });
      // The summary repeats every source: one forgotten or archived meanwhile would live on in it.
      if (live.length < sources.length) throw topicChanged(topic, sources.length - live.length);
      const at = now.toISOString();
      await this.fold([entry], (next) => {
        const documents = next.documents.copy();
        for (const m of live) {
          const doc = documents.get(m.id)!;
          documents.set(m.id, { ...doc, memory: { ...doc.memory!, archivedAt: at } });
        }
        const links: Link[] = live.map((m) => ({
          from: `${entry.id}:0`,
          to: `${m.id}:0`,
          type: 'summarizes',
          strength: 1,
        }));
        return { ...next, documents, manual: [...next.manual, ...links] };
      });
      return { summary: entry.id, text: entry.text, archived: live.map((m) => m.id) };
    });
  }

  /** Whether a topic has more active memories than the consolidation threshold. */
  needsConsolidation(topic: string, now: Date = new Date()): boolean {
    const t = this.topics(now).find((x) => x.topic === topic);
    return (t?.memories ?? 0) > this.memorySettings().consolidateThreshold;
  }

  // ---- helpers -----------------------------------------------------------------------------------

  private memoryDocs(ids: string[]): DocumentRecord[] {
    const docs: DocumentRecord[] = [];
    const missing: string[] = [];
    for (const id of new Set(ids.map(memoryDocId))) {
      // The graph's view: journaled memories too.
      const doc = this.graph.document(id);
      if (doc?.memory) docs.push(doc);
      else missing.push(id);
    }
    if (missing.length > 0)
      throw new RlmError('NOT_FOUND', `no memory with id ${missing.join(', ')}; nothing was changed`, {
        ids: missing,
      });
    return docs;
  }

  private weightInput(doc: DocumentRecord): WeightInput {
    const [accessCount, lastAccessMs] = this.persistence.accessRaw(`${doc.id}:0`);
    return {
      importance: doc.memory!.importance,
      createdMs: createdMs(doc),
      accessCount,
      lastAccessMs,
    };
  }

  private isArchived(doc: DocumentRecord, nowMs: number, settings: MemorySettings): boolean {
    return doc.memory!.archivedAt !== undefined || fadedOut(this.weightInput(doc), nowMs, settings);
  }

  protected memoryOf(doc: DocumentRecord, nowMs: number): Memory {
    const settings = this.memorySettings();
    const input = this.weightInput(doc);
    const access = this.persistence.accessStats(`${doc.id}:0`);
    return {
      id: doc.id,
      text: this.graph.getChunk(`${doc.id}:0`)?.text ?? '',
      topic: doc.memory!.topic,
      importance: doc.memory!.importance,
      tags: doc.tags ?? [],
      source: doc.memory!.source,
      created: doc.ingestedAt,
      lastAccessed: access.last,
      accessCount: access.count,
      weight: memoryWeight(input, nowMs, settings),
      archived: this.isArchived(doc, nowMs, settings),
    };
  }
}
