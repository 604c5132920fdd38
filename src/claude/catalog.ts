/**
 * Reading imported Claude Code history back: projects, sessions in time order, and recall (ranked
 * exchanges). Projects and timeline come from the part records alone (no chunk is read); recall is a
 * store search restricted to the matching sessions' parts.
 */

import { RlmError } from '../../core/errors.ts';
import { realDay } from '../../memory/memories/memory-model.ts';
import type { Store } from '../../memory/store-api.ts';
import type { DocumentRecord } from '../../memory/types.ts';
import { isoTime } from './reader.ts';

export interface ProjectEntry {
  project: string;
  sessions: number;
  exchanges: number;
  first: string | null;
  last: string | null;
}

export interface SessionEntry {
  session: string;
  project: string;
  title: string;
  start: string | null;
  end: string | null;
  exchanges: number;
  /** Subagent runs of the session. */
  subagents: number;
}

export interface RecallHit {
  id: string;
  score: number;
  session: string;
  project: string;
  time: string | null;
  branch: string | null;
  model: string | null;
  agent: string | null;
  text: string;
}

export interface HistoryFilter {
  /** A project's real path, or its last path segments (`app`, `work/app`). */
  project?: string;
  /** ISO date or time; a bare date means its whole day. */
  since?: string;
  until?: string;
}

interface Session extends SessionEntry {
  parts: DocumentRecord[];
}

/** The imported sessions, oldest first. */
async function sessions(store: Pick<Store, 'documents'>): Promise<Session[]> {
  const byId = new Map<string, Session & { prompt?: string; summary?: string; promptFrom: number }>();
  for (const d of await store.documents()) {
    const m = d.meta;
    if (m?.source !== 'claude-code') continue;
    const id = String(m.session);
    let s = byId.get(id);
    if (!s) {
      s = {
        session: id,
        project: String(m.project),
        title: '',
        start: null,
        end: null,
        exchanges: 0,
        subagents: 0,
        parts: [],
        promptFrom: Number.POSITIVE_INFINITY,
      };
      byId.set(id, s);
    }
    s.parts.push(d);
    const agent = m.agent !== undefined;
    if (!agent) s.exchanges += Number(m.exchanges ?? 0);
    // Stores imported before times were normalised hold them as the session file wrote them.
    const first = isoTime(m.first);
    const last = isoTime(m.last);
    if (first !== undefined && (s.start === null || first < s.start)) s.start = first;
    if (last !== undefined && (s.end === null || last > s.end)) s.end = last;
    if (typeof m.title === 'string') s.summary ??= m.title;
    if (!agent && typeof m.prompt === 'string' && Number(m.from) < s.promptFrom) {
      s.prompt = m.prompt;
      s.promptFrom = Number(m.from);
    }
  }
  const out: Session[] = [];
  for (const s of byId.values()) {
    s.subagents = new Set(s.parts.filter((p) => p.meta?.agent !== undefined).map((p) => p.meta!.agent)).size;
    const { prompt, summary, promptFrom: _, ...entry } = s;
    out.push({ ...entry, title: summary ?? prompt ?? '(no messages)' });
  }
  return out.sort(
    (a, b) => (a.start ?? '').localeCompare(b.start ?? '') || a.session.localeCompare(b.session),
  );
}

/** Projects with their session and exchange counts and first and last activity, most recent first. */
export async function listProjects(store: Pick<Store, 'documents'>): Promise<ProjectEntry[]> {
  const byPath = new Map<string, ProjectEntry>();
  for (const s of await sessions(store)) {
    const p = byPath.get(s.project) ?? {
      project: s.project,
      sessions: 0,
      exchanges: 0,
      first: null,
      last: null,
    };
    p.sessions++;
    p.exchanges += s.exchanges;
    if (s.start !== null && (p.first === null || s.start < p.first)) p.first = s.start;
    if (s.end !== null && (p.last === null || s.end > p.last)) p.last = s.end;
    byPath.set(s.project, p);
  }
  return [...byPath.values()].sort((a, b) => (b.last ?? '').localeCompare(a.last ?? ''));
}

/** Sessions in time order, filtered by project and time range (a session overlapping the range counts). */
export async function timeline(
  store: Pick<Store, 'documents'>,
  filter: HistoryFilter = {},
): Promise<SessionEntry[]> {
  return (await matching(store, filter)).map(({ parts: _, ...entry }) => entry);
}

async function matching(store: Pick<Store, 'documents'>, filter: HistoryFilter): Promise<Session[]> {
  const all = await sessions(store);
  const projects = filter.project === undefined ? null : projectsMatching(all, filter.project);
  const since = filter.since === undefined ? null : parseWhen(filter.since, 'since');
  const until = filter.until === undefined ? null : parseWhen(filter.until, 'until');
  return all.filter((s) => {
    if (projects && !projects.has(s.project)) return false;
    const start = s.start === null ? null : Date.parse(s.start);
    const end = s.end === null ? start : Date.parse(s.end);
    if (since !== null && (end === null || end < since)) return false;
    if (until !== null && (start === null || start > until)) return false;
    return true;
  });
}

function projectsMatching(all: Session[], wanted: string): Set<string> {
  const w = wanted.replace(/[\\/]+$/, '');
  const paths = new Set(all.map((s) => s.project));
  const exact = [...paths].filter((p) => p === w);
  const found =
    exact.length > 0 ? exact : [...paths].filter((p) => p.endsWith(`/${w}`) || p.endsWith(`\\${w}`));
  if (found.length === 0) {
    throw new RlmError(
      'BAD_INPUT',
      `no imported project matches '${wanted}' (rlm claude projects lists them; give a path or its last segments)`,
    );
  }
  return new Set(found);
}

/** Epoch ms of an ISO date or time; a bare date is the start (since) or the end (until) of its day. */
function parseWhen(value: string, which: 'since' | 'until'): number {
  const v = value.trim();
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v);
  const ms = Date.parse(day ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(ms) || !realDay(v)) {
    throw new RlmError(
      'BAD_INPUT',
      `--${which} must be an ISO date or time (2026-01-31, 2026-01-31T14:00Z), got '${value}'`,
    );
  }
  return day && which === 'until' ? ms + 86_400_000 - 1 : ms;
}

/**
 * The `k` best exchanges for `query` among the sessions matching `filter`, each with its session,
 * project, time and text. Exchanges outside the time range are left out even in a matching session.
 */
export async function recall(
  store: Pick<Store, 'documents' | 'search' | 'getChunk' | 'touch'>,
  query: string,
  filter: HistoryFilter & { k?: number } = {},
): Promise<{ results: RecallHit[]; sessions: string[] }> {
  if (query.trim() === '') throw new RlmError('BAD_INPUT', 'recall: the query is empty');
  const k = filter.k ?? 10;
  const since = filter.since === undefined ? null : parseWhen(filter.since, 'since');
  const until = filter.until === undefined ? null : parseWhen(filter.until, 'until');
  // Without filters every imported session matches: no need to list them.
  const filtered = filter.project !== undefined || since !== null || until !== null;
  const chosen = filtered ? await matching(store, filter) : null;
  if (chosen?.length === 0) return { results: [], sessions: [] };
  const hits = await store.search(query, {
    // Over-fetch when the time range may drop some exchanges of the matching sessions.
    k: since !== null || until !== null ? Math.max(k * 5, 50) : k,
    tags: ['claude'],
    ...(chosen ? { document: chosen.flatMap((s) => s.parts.map((p) => p.id)) } : {}),
  });
  const results: RecallHit[] = [];
  for (const h of hits) {
    if (results.length >= k) break;
    const chunk = await store.getChunk(h.id);
    if (!chunk) continue;
    const t = chunk.time === undefined ? null : Date.parse(chunk.time);
    if (since !== null && (t === null || t < since)) continue;
    if (until !== null && (t === null || t > until)) continue;
    const tag = (p: string) => chunk.tags.find((x) => x.startsWith(p))?.slice(p.length) ?? null;
    results.push({
      id: h.id,
      score: h.score,
      session: tag('session:') ?? '',
      project: tag('project:') ?? '',
      time: isoTime(chunk.time) ?? null,
      branch: tag('branch:'),
      model: tag('model:'),
      agent: tag('agent:'),
      text: chunk.text,
    });
  }
  store.touch(results.map((r) => r.id));
  return { results, sessions: [...new Set(results.map((r) => r.session))] };
}

/** The full text of sessions (main file and subagent runs), with a header line each, for `--answer`. */
export async function sessionTexts(
  store: Pick<Store, 'documents' | 'documentChunks'>,
  ids: string[],
): Promise<{ session: string; text: string }[]> {
  const all = new Map((await sessions(store)).map((s) => [s.session, s]));
  const out: { session: string; text: string }[] = [];
  for (const id of ids) {
    const s = all.get(id);
    if (!s) continue;
    const parts = [...s.parts].sort(
      (a, b) =>
        String(a.meta?.agent ?? '').localeCompare(String(b.meta?.agent ?? '')) ||
        Number(a.meta?.from) - Number(b.meta?.from),
    );
    const texts: string[] = [];
    for (const p of parts) {
      const text = (await store.documentChunks(p.id)).map((c) => c.text).join('\n\n');
      texts.push(
        p.meta?.agent !== undefined && Number(p.meta.from) === 0
          ? `[subagent ${p.meta.agent}]\n${text}`
          : text,
      );
    }
    const body = texts.filter((t) => t !== '').join('\n\n');
    const header = `# Claude Code session ${s.session} · ${s.project} · ${s.start ?? '?'} – ${s.end ?? '?'} · ${s.title}`;
    out.push({ session: id, text: `${header}\n\n${body}` });
  }
  return out;
}
