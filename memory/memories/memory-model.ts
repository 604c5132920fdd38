/**
 * The rules of memories, free of storage: input checks, settings, the decay weight and the recall score.
 * Every command that reads a weight goes through {@link memoryWeight}, so `rlm decay` is never needed
 * for recall to be right; it only makes archiving visible on disk.
 */
import { randomBytes } from 'node:crypto';
import { RlmError } from '../../core/errors.ts';
import {
  MEMORY_IMPORTANCE,
  MEMORY_SOURCES,
  type MemoryImportance,
  type MemorySettings,
  type MemorySource,
} from '../types.ts';

const DAY_MS = 86_400_000;
/** Longest topic, in characters. */
export const MAX_TOPIC_CHARS = 200;
/** Largest memory text, in UTF-8 bytes. */
const MAX_MEMORY_BYTES = 1024 * 1024;
const DEFAULT_TOPIC = 'general';
/** Weight gained per natural-log unit of accesses: 10 accesses make a fresh memory weigh about 1.48. */
const REINFORCEMENT = 0.2;
/** Days for the recency factor of recall to halve. */
const RECENCY_HALF_LIFE_DAYS = 30;

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = {
  decayRate: 0.95,
  multipliers: { critical: 0, high: 0.5, medium: 1, low: 2 },
  pruneThreshold: 0.1,
  consolidateThreshold: 10,
  autoConsolidate: null,
  foldEvery: 1000,
};

/** What `remember` is given. */
export interface RememberInput {
  text: string;
  topic?: string;
  importance?: string;
  tags?: string[];
  source?: string;
  /** Creation time (default now): `--now` makes runs reproducible. */
  now?: Date;
  /**
   * Gives up a write still waiting for the store's lock (ABORTED, nothing stored): a cancelled call must
   * not store the memory once the lock comes free, or a retry would store it twice.
   */
  signal?: AbortSignal;
}

/** A journal line: one remembered memory not yet folded into a segment. */
export interface JournalEntry {
  id: string;
  text: string;
  topic: string;
  importance: MemoryImportance;
  tags: string[];
  source: MemorySource;
  createdAt: string;
}

/** Checks `input` and returns the journal entry to write, or throws BAD_INPUT with one clear line. */
export function checkRemember(input: RememberInput): JournalEntry {
  const text = typeof input.text === 'string' ? input.text : '';
  if (text.trim().length === 0) throw new RlmError('BAD_INPUT', 'nothing to remember: the text is empty');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_MEMORY_BYTES) {
    throw new RlmError(
      'BAD_INPUT',
      `the text is ${bytes} bytes; a memory holds at most ${MAX_MEMORY_BYTES} (1 MiB): ingest big texts with \`rlm ingest\``,
    );
  }
  const topic = checkTopic(input.topic ?? DEFAULT_TOPIC);
  const importance = checkImportance(input.importance ?? 'medium');
  const source = input.source ?? 'cli';
  if (!(MEMORY_SOURCES as readonly string[]).includes(source)) {
    throw new RlmError('BAD_INPUT', `unknown source "${source}": use ${MEMORY_SOURCES.join(', ')}`);
  }
  const tags = [...new Set((input.tags ?? []).map((t) => String(t).trim()).filter((t) => t.length > 0))];
  const now = input.now ?? new Date();
  return {
    id: newMemoryId(now),
    text,
    topic,
    importance,
    tags,
    source: source as MemorySource,
    createdAt: now.toISOString(),
  };
}

function checkTopic(topic: string): string {
  const t = String(topic).trim();
  if (t.length === 0) throw new RlmError('BAD_INPUT', 'the topic is empty');
  // Characters as a person counts them (code points): an emoji is one, not two UTF-16 units.
  const chars = [...t].length;
  if (chars > MAX_TOPIC_CHARS) {
    throw new RlmError('BAD_INPUT', `the topic is ${chars} characters; at most ${MAX_TOPIC_CHARS}`);
  }
  return t;
}

function checkImportance(value: string): MemoryImportance {
  if (!(MEMORY_IMPORTANCE as readonly string[]).includes(value)) {
    throw new RlmError('BAD_INPUT', `unknown importance "${value}": use critical, high, medium or low`);
  }
  return value as MemoryImportance;
}

/** `mem-` + base-36 milliseconds + 6 random hex: sortable by creation, unique across processes. */
function newMemoryId(now: Date): string {
  return `mem-${Math.max(0, now.getTime()).toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** The memory's document id from what a person may type: `mem-…` or its chunk id `mem-…:0`. */
/** File name of the memory journal a commit of `generation` starts (memories-G.jsonl, G on 8 digits). */
export function journalName(generation: number): string {
  return `memories-${String(generation).padStart(8, '0')}.jsonl`;
}

export function memoryDocId(id: string): string {
  return id.endsWith(':0') ? id.slice(0, -2) : id;
}

export function isJournalEntry(v: unknown): v is JournalEntry {
  const e = v as Partial<JournalEntry> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.id === 'string' &&
    typeof e.text === 'string' &&
    typeof e.topic === 'string' &&
    typeof e.createdAt === 'string' &&
    (MEMORY_IMPORTANCE as readonly string[]).includes(e.importance as string) &&
    Array.isArray(e.tags)
  );
}

/** Settings with `patch` applied, checked (BAD_INPUT names the bad one). */
export function mergeSettings(base: MemorySettings, patch: Partial<MemorySettings>): MemorySettings {
  const s: MemorySettings = {
    ...base,
    ...patch,
    multipliers: { ...base.multipliers, ...(patch.multipliers ?? {}) },
  };
  if (!(s.decayRate > 0 && s.decayRate <= 1))
    throw new RlmError('BAD_INPUT', `decay rate must be in (0, 1], got ${s.decayRate}`);
  if (!(s.pruneThreshold >= 0 && s.pruneThreshold < 1))
    throw new RlmError('BAD_INPUT', `prune threshold must be in [0, 1), got ${s.pruneThreshold}`);
  for (const imp of MEMORY_IMPORTANCE) {
    const m = s.multipliers[imp];
    if (!(Number.isFinite(m) && m >= 0))
      throw new RlmError('BAD_INPUT', `the ${imp} multiplier must be a number ≥ 0, got ${m}`);
  }
  if (!(Number.isInteger(s.consolidateThreshold) && s.consolidateThreshold >= 2))
    throw new RlmError(
      'BAD_INPUT',
      `consolidation threshold must be an integer ≥ 2, got ${s.consolidateThreshold}`,
    );
  if (!(Number.isInteger(s.foldEvery) && s.foldEvery >= 1))
    throw new RlmError('BAD_INPUT', `foldEvery must be a positive integer, got ${s.foldEvery}`);
  if (s.autoConsolidate !== null && (typeof s.autoConsolidate !== 'string' || s.autoConsolidate === ''))
    throw new RlmError('BAD_INPUT', 'autoConsolidate must be a model spec or null');
  return s;
}

/** What the weight depends on. */
export interface WeightInput {
  importance: MemoryImportance;
  createdMs: number;
  accessCount: number;
  /** Epoch ms of the last access, 0 if never read. */
  lastAccessMs: number;
}

/**
 * weight = (1 + 0.2·ln(1 + accesses)) · rate^(days · multiplier), where `days` counts from the last
 * access (or creation). Access refreshes (days restart) and reinforces (the first factor grows).
 */
export function memoryWeight(m: WeightInput, nowMs: number, s: MemorySettings): number {
  const since = Math.max(m.createdMs, m.lastAccessMs);
  const days = Math.max(0, (nowMs - since) / DAY_MS);
  const strength = 1 + REINFORCEMENT * Math.log1p(Math.max(0, m.accessCount));
  return strength * s.decayRate ** (days * s.multipliers[m.importance]);
}

/** True when a memory's weight puts it in the archive (critical memories never are). */
export function fadedOut(m: WeightInput, nowMs: number, s: MemorySettings): boolean {
  return m.importance !== 'critical' && memoryWeight(m, nowMs, s) < s.pruneThreshold;
}

/**
 * Recall score: relevance (the search score over the best one, 0..1) × weight × recency factor, where
 * recency = 0.75 + 0.25 · 0.5^(age in days / 30) favours newer memories among equals.
 */
export function recallScore(relevance: number, weight: number, createdMs: number, nowMs: number): number {
  const ageDays = Math.max(0, (nowMs - createdMs) / DAY_MS);
  const recency = 0.75 + 0.25 * 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS);
  return relevance * weight * recency;
}

/** Parses a `--since` / `--until` / `--now` value: ISO date or time, or `Nd` (N days before `now`). */
export function parseWhen(value: string, what: string, now: Date = new Date()): Date {
  const rel = /^(\d+(?:\.\d+)?)d$/.exec(value.trim());
  if (rel) return new Date(now.getTime() - Number(rel[1]) * DAY_MS);
  const d = new Date(value);
  if (Number.isNaN(d.getTime()) || !realDay(value.trim()))
    throw new RlmError('BAD_INPUT', `${what} must be an ISO date (2026-01-31) or Nd (7d), got "${value}"`);
  return d;
}

/**
 * Whether the day an ISO date or time names exists: `Date` rolls 2026-02-30 over to March 2nd. Dates of
 * other forms are left to `Date`.
 */
export function realDay(value: string): boolean {
  const ymd = /^([+-]?\d{4,6})-(\d{2})-(\d{2})/.exec(value);
  if (!ymd) return true;
  const [year, month, day] = [Number(ymd[1]), Number(ymd[2]), Number(ymd[3])];
  const probe = new Date(Date.UTC(2000, month - 1, day));
  probe.setUTCFullYear(year);
  return probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

/** A memory as the surfaces show it. */
export interface Memory {
  id: string;
  text: string;
  topic: string;
  importance: MemoryImportance;
  tags: string[];
  source: MemorySource;
  created: string;
  lastAccessed: string | null;
  accessCount: number;
  /** Weight at the time asked (see README, "Memories"). */
  weight: number;
  /** Archived explicitly (decay, consolidation) or faded under the prune threshold. */
  archived: boolean;
}

export interface RecallOptions {
  k?: number;
  topic?: string;
  /** Every tag must be on the memory. */
  tags?: string[];
  since?: Date;
  until?: Date;
  /** Include archived memories (default false). */
  archived?: boolean;
  now?: Date;
}

export interface RecallHit extends Memory {
  score: number;
  /** Search relevance over the best candidate's, 0..1. */
  relevance: number;
}

export interface TopicSummary {
  topic: string;
  memories: number;
  archived: number;
}

export interface MemoryTotals {
  memories: number;
  archived: number;
  topics: number;
  /** Memories still in the journal, not yet folded into a segment. */
  journaled: number;
}

/** What a consolidation model is given, and must turn into one summary text. */
export type Summarizer = (
  topic: string,
  memories: { id: string; text: string; importance: MemoryImportance; created: string }[],
) => Promise<string>;

const importanceRank: Record<MemoryImportance, number> = { critical: 3, high: 2, medium: 1, low: 0 };

/**
 * Why a consolidation writes nothing after all: `gone` of the memories it summarized were forgotten,
 * archived or consolidated by another writer while the model summarized them, and the summary repeats
 * their text. `details.topicChanged` lets automatic consolidation leave it to the next remember.
 */
export function topicChanged(topic: string, gone: number): RlmError {
  return new RlmError(
    'RUNTIME',
    `topic "${topic}" changed while the model summarized it (${gone} of its memories were forgotten, archived or consolidated meanwhile); nothing was written: consolidate it again`,
    { topicChanged: true },
  );
}

/**
 * The summary memory of a consolidation, whatever store holds the topic: `active` are the topic's active
 * memories (newest first, as `listMemories` gives them); critical ones are left out and stay. The
 * summary has the highest importance and all the tags of its sources. BAD_INPUT with fewer than two
 * sources, PROVIDER for an empty summary; nothing is written either way.
 */
export async function summarizeTopic(
  topic: string,
  active: Memory[],
  summarize: Summarizer,
  now: Date,
): Promise<{ entry: JournalEntry; sources: Memory[] }> {
  const sources = active.filter((m) => m.importance !== 'critical');
  if (sources.length < 2) {
    throw new RlmError(
      'BAD_INPUT',
      `topic "${topic}" has ${sources.length} memor${sources.length === 1 ? 'y' : 'ies'} to consolidate; it needs at least 2`,
    );
  }
  sources.reverse(); // oldest first: the order they were said in
  const text = String(
    await summarize(
      topic,
      sources.map((m) => ({ id: m.id, text: m.text, importance: m.importance, created: m.created })),
    ),
  ).trim();
  if (text.length === 0)
    throw new RlmError('PROVIDER', 'the model wrote an empty summary; nothing was changed');
  // The model's fault, not the caller's: a memory's own limit would call it bad input.
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_MEMORY_BYTES)
    throw new RlmError(
      'PROVIDER',
      `the model wrote a summary of ${bytes} bytes, over a memory's ${MAX_MEMORY_BYTES} (1 MiB); nothing was changed`,
    );
  const top = sources.reduce(
    (a, m) => (importanceRank[m.importance] > importanceRank[a] ? m.importance : a),
    'low' as MemoryImportance,
  );
  const entry = checkRemember({
    text,
    topic,
    importance: top,
    tags: [...new Set(sources.flatMap((m) => m.tags))],
    source: 'consolidation',
    now,
  });
  return { entry, sources };
}

/** What a consolidation did: the summary memory's id and text, and the sources it archived. */
export interface Consolidation {
  /** The new summary memory's id (`mem-…`). */
  summary: string;
  /** The summary's text, as the model wrote it. */
  text: string;
  archived: string[];
}

/** What a delete took out of a store. */
export interface DeleteReport {
  /** Documents deleted as asked (every part of a file named by path or id). */
  deleted: string[];
  /** Consolidation summaries deleted with them: written from a deleted memory, they may repeat its text. */
  summaries: string[];
  /** Those summaries' other sources, brought back from the archive so nothing else is lost. */
  restored: string[];
}
