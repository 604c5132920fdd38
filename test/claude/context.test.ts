import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSession } from '../../benchmarks/claude-corpus.ts';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import { countTokens } from '../../memory/ingest/tokens.ts';
import { DEFAULT_CONTEXT_TOKENS, projectContext } from '../../src/claude/context.ts';
import { importClaude } from '../../src/claude/import.ts';

const APP = '/home/ana/app';
const NOW = new Date('2026-04-01T12:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'rlm-claude-context-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A store with memories of this project, of another one and of none, and sessions of both projects. */
async function seeded(): Promise<MemoryChunkStore> {
  const store = new MemoryChunkStore();
  const at = (day: string) => new Date(`2026-${day}T10:00:00Z`);
  await store.remember({
    text: 'Deploy with make ship; never on Fridays.',
    topic: 'deploy',
    importance: 'critical',
    tags: [`project:${APP}`],
    now: at('01-05'),
  });
  await store.remember({
    text: 'The login test waits for the redirect.',
    topic: 'testing',
    importance: 'low',
    tags: [`project:${APP}`],
    now: at('03-30'),
  });
  await store.remember({
    text: 'An old low note that has faded away.',
    topic: 'misc',
    importance: 'low',
    tags: [`project:${APP}`],
    now: at('01-01'),
  });
  await store.remember({
    text: 'The user prefers short answers.',
    topic: 'style',
    importance: 'high',
    now: at('03-01'),
  });
  await store.remember({
    text: 'The API is written in Rust.',
    topic: 'stack',
    importance: 'critical',
    tags: ['project:/srv/api'],
    now: at('03-31'),
  });
  const projects = join(dir, 'projects');
  for (let i = 1; i <= 7; i++) {
    writeSession(projects, APP, {
      session: `app-${i}`,
      cwd: APP,
      summary: `App session number ${i}`,
      exchanges: [{ user: `question ${i}`, assistant: `answer ${i}`, time: `2026-03-0${i}T09:00:00.000Z` }],
    });
  }
  writeSession(projects, '/srv/api', {
    session: 'api-1',
    cwd: '/srv/api',
    summary: 'Reports off by one hour',
    exchanges: [{ user: 'reports?', assistant: 'UTC', time: '2026-03-09T09:00:00.000Z' }],
  });
  await importClaude(store, { projectsDir: projects });
  return store;
}

describe('projectContext', () => {
  let store: MemoryChunkStore;
  beforeAll(async () => {
    store = await seeded();
  });

  it('is empty when nothing is known about the project', async () => {
    expect(projectContext(new MemoryChunkStore(), { cwd: APP })).toEqual({
      project: APP,
      memories: [],
      sessions: [],
      tokens: 0,
      text: '',
    });
    // Memories of other projects and sessions elsewhere say nothing about this one.
    const other = new MemoryChunkStore();
    await other.remember({ text: 'Rust', tags: ['project:/srv/api'] });
    expect(projectContext(other, { cwd: APP }).text).toBe('');
  });

  it("shows the project's memories first, then those of no project, heaviest first; never another project's", () => {
    const r = projectContext(store, { cwd: APP, now: NOW });
    expect(r.memories.map((m) => [m.text, m.project])).toEqual([
      ['Deploy with make ship; never on Fridays.', APP],
      ['The login test waits for the redirect.', APP],
      ['The user prefers short answers.', null],
    ]);
    expect(r.text).not.toContain('Rust');
    expect(r.text).not.toContain('faded');
    expect(r.text).toContain(`## What rlm remembers about this project (${APP})`);
    expect(r.text).toContain(`Tag memories about this project \`project:${APP}\``);
    expect(r.text).toMatch(
      /- \[critical, deploy\] Deploy with make ship; never on Fridays\. \(mem-[^)]+\)\n/,
    );
  });

  it('lists the five most recent sessions of the project, without the one starting', () => {
    const r = projectContext(store, { cwd: APP, now: NOW, session: 'app-7' });
    expect(r.sessions.map((s) => s.session)).toEqual(['app-6', 'app-5', 'app-4', 'app-3', 'app-2']);
    expect(r.text).toContain('- 2026-03-06 · 1 exchange · App session number 6\n');
    expect(r.text).not.toContain('Reports off by one hour');
    // Memories come before sessions.
    expect(r.text.indexOf('Memories, heaviest first')).toBeLessThan(
      r.text.indexOf('Recent Claude Code sessions'),
    );
  });

  it('stays within the token budget, dropping the lightest lines first', () => {
    const full = projectContext(store, { cwd: APP, now: NOW });
    expect(full.tokens).toBe(countTokens(full.text));
    expect(full.tokens).toBeLessThanOrEqual(DEFAULT_CONTEXT_TOKENS);
    for (const budget of [40, 60, 90, 120, 200]) {
      const r = projectContext(store, { cwd: APP, now: NOW, maxTokens: budget });
      expect(countTokens(r.text), `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(r.tokens).toBe(countTokens(r.text));
      // What is shown is a prefix of the full ranking.
      expect(full.memories.slice(0, r.memories.length)).toEqual(r.memories);
      expect(full.sessions.slice(0, r.sessions.length)).toEqual(r.sessions);
    }
    const small = projectContext(store, { cwd: APP, now: NOW, maxTokens: 90 });
    expect(small.memories.length).toBeGreaterThan(0);
    expect(small.memories.length + small.sessions.length).toBeLessThan(
      full.memories.length + full.sessions.length,
    );
    // Too small for the heading and one line: nothing rather than a heading alone.
    expect(projectContext(store, { cwd: APP, now: NOW, maxTokens: 10 }).text).toBe('');
  });

  it('ranks fresh memories, which all weigh about 1, by importance, then newest first', async () => {
    const fresh = new MemoryChunkStore();
    const now = new Date('2026-04-01T12:00:00Z');
    for (const [text, importance, minute] of [
      ['low one', 'low', 1],
      ['medium old', 'medium', 2],
      ['critical one', 'critical', 3],
      ['medium new', 'medium', 4],
      ['high one', 'high', 5],
    ] as const)
      await fresh.remember({ text, importance, now: new Date(now.getTime() + minute * 60_000) });
    const r = projectContext(fresh, { cwd: APP, now: new Date(now.getTime() + 3_600_000) });
    expect(r.memories.map((m) => m.text)).toEqual([
      'critical one',
      'high one',
      'medium new',
      'medium old',
      'low one',
    ]);
  });

  it('takes the project a subfolder belongs to', () => {
    const r = projectContext(store, { cwd: `${APP}/packages/web`, now: NOW });
    expect(r.project).toBe(APP);
    expect(r.memories[0]?.project).toBe(APP);
    expect(r.sessions).toHaveLength(5);
  });
});
