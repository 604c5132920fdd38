/**
 * What rlm remembers about a project, as a short text a Claude Code session starts with (the plugin's
 * SessionStart hook, `rlm claude context`): the heaviest memories of the project, then those that belong to
 * no project (among equal weights, the more important first), then the project's recent sessions, within
 * a token budget. Nothing at all when there is
 * nothing to say, so a session in a project rlm knows nothing of starts exactly as without it.
 *
 * A memory belongs to a project through a `project:PATH` tag, the tag imported sessions carry too; one
 * tagged for another project is left out. A project matches the session's folder when either lies inside
 * the other (a session started in a subfolder still sees the project's memories and sessions).
 */
import { inside } from '../../core/paths.ts';
import { plural } from '../../core/plural.ts';
import type { BaseStore } from '../../memory/engine/base-store.ts';
import { countTokens } from '../../memory/ingest/tokens.ts';
import type { Memory } from '../../memory/memories/memory-model.ts';
import { type SessionEntry, timeline } from './catalog.ts';
import { shorten } from './reader.ts';

/** Default size of the text, in tokens (cl100k). */
export const DEFAULT_CONTEXT_TOKENS = 600;
/** Sessions listed at most. */
const MAX_SESSIONS = 5;
/** Characters of a memory shown at most: the rest is one rlm_recall away. */
const MEMORY_CHARS = 300;
const TITLE_CHARS = 100;
const PROJECT_TAG = 'project:';
const IMPORTANCE = ['critical', 'high', 'medium', 'low'];

export interface ContextOptions {
  /** The session's working folder: the project (absolute). */
  cwd: string;
  /** Budget for the whole text, in tokens (default {@link DEFAULT_CONTEXT_TOKENS}). */
  maxTokens?: number;
  /** A session to leave out: the one starting (resumed sessions may already be imported). */
  session?: string;
  now?: Date;
}

export interface ContextMemory {
  id: string;
  text: string;
  topic: string;
  importance: string;
  weight: number;
  created: string;
  /** The project the memory is tagged with, or null for a memory of no project. */
  project: string | null;
}

export interface ProjectContext {
  project: string;
  /** The memories and sessions the text shows, in its order. */
  memories: ContextMemory[];
  sessions: Omit<SessionEntry, 'subagents'>[];
  /** Tokens of `text` (at most the budget). */
  tokens: number;
  /** The text; empty when there is nothing to show. */
  text: string;
}

type Store = Pick<BaseStore, 'documents'> & { listMemories(opts?: { now?: Date }): Memory[] };

/** Builds the text for `opts.cwd` from `store`'s memories and imported sessions. */
export function projectContext(store: Store, opts: ContextOptions): ProjectContext {
  const budget = opts.maxTokens ?? DEFAULT_CONTEXT_TOKENS;
  const cwd = opts.cwd;
  const related = (p: string) => inside(cwd, p) || inside(p, cwd);
  const memories = rankedMemories(store.listMemories(opts.now ? { now: opts.now } : {}), related);
  const sessions = timeline(store)
    .filter((s) => related(s.project) && s.session !== opts.session)
    .sort((a, b) => (b.end ?? b.start ?? '').localeCompare(a.end ?? a.start ?? ''))
    .slice(0, MAX_SESSIONS);
  const empty: ProjectContext = { project: cwd, memories: [], sessions: [], tokens: 0, text: '' };
  if (memories.length === 0 && sessions.length === 0) return empty;
  // Started in a subfolder of a project rlm knows: the project is that folder.
  const project =
    [...memories.map((m) => m.project), ...sessions.map((s) => s.project)]
      .filter((p): p is string => p !== null && inside(cwd, p))
      .reduce((best, p) => (p.length > best.length ? p : best), '') || cwd;

  const head =
    `## What rlm remembers about this project (${project})\n` +
    `rlm_recall and rlm_claude_recall find more. Tag memories about this project \`${PROJECT_TAG}${project}\`.\n`;
  const memoryHead = '\nMemories, heaviest first:\n';
  const sessionHead = '\nRecent Claude Code sessions here:\n';
  let used = countTokens(head);
  if (used > budget) return { ...empty, project };
  // Sessions may take up to a third of the budget; memories get the rest, and what sessions leave.
  const sessionBudget = Math.floor((budget - used) / 3);
  const sessionLines: string[] = [];
  const shownSessions: ProjectContext['sessions'] = [];
  let sessionTokens = countTokens(sessionHead);
  for (const s of sessions) {
    const line = sessionLine(s);
    const cost = countTokens(line);
    if (sessionTokens + cost > sessionBudget) break;
    sessionTokens += cost;
    sessionLines.push(line);
    const { subagents: _, ...entry } = s;
    shownSessions.push(entry);
  }
  if (sessionLines.length > 0) used += sessionTokens;
  const memoryLines: string[] = [];
  const shownMemories: ContextMemory[] = [];
  let memoryTokens = countTokens(memoryHead);
  for (const m of memories) {
    const line = memoryLine(m);
    const cost = countTokens(line);
    if (used + memoryTokens + cost > budget) break;
    memoryTokens += cost;
    memoryLines.push(line);
    shownMemories.push(m);
  }
  if (memoryLines.length === 0 && sessionLines.length === 0) return { ...empty, project };
  const text =
    head +
    (memoryLines.length > 0 ? memoryHead + memoryLines.join('') : '') +
    (sessionLines.length > 0 ? sessionHead + sessionLines.join('') : '');
  return { project, memories: shownMemories, sessions: shownSessions, tokens: countTokens(text), text };
}

/** The project's memories, then those of no project, each heaviest (then newest) first. */
function rankedMemories(all: Memory[], related: (p: string) => boolean): ContextMemory[] {
  const mine: ContextMemory[] = [];
  const general: ContextMemory[] = [];
  for (const m of all) {
    const projects = m.tags.filter((t) => t.startsWith(PROJECT_TAG)).map((t) => t.slice(PROJECT_TAG.length));
    const entry = (project: string | null): ContextMemory => ({
      id: m.id,
      text: m.text,
      topic: m.topic,
      importance: m.importance,
      weight: m.weight,
      created: m.created,
      project,
    });
    const match = projects.find(related);
    if (match !== undefined) mine.push(entry(match));
    else if (projects.length === 0) general.push(entry(null));
  }
  // Weights equal to a hundredth (fresh memories all weigh about 1) are ranked by importance, then age.
  const order = (a: ContextMemory, b: ContextMemory) =>
    Math.round(b.weight * 100) - Math.round(a.weight * 100) ||
    IMPORTANCE.indexOf(a.importance) - IMPORTANCE.indexOf(b.importance) ||
    b.created.localeCompare(a.created);
  return [...mine.sort(order), ...general.sort(order)];
}

function memoryLine(m: ContextMemory): string {
  return `- [${m.importance}, ${shorten(m.topic, 40)}] ${shorten(m.text, MEMORY_CHARS)} (${m.id})\n`;
}

function sessionLine(s: SessionEntry): string {
  const when = (s.end ?? s.start ?? '').slice(0, 10) || 'undated';
  return `- ${when} · ${plural(s.exchanges, 'exchange')} · ${shorten(s.title, TITLE_CHARS)}\n`;
}
