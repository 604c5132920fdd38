import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSession } from '../../../benchmarks/claude-corpus.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { importClaude } from '../../../src/claude/import.ts';
import {
  claudeProjectsOutput,
  claudeRecallOutput,
  claudeTimelineOutput,
} from '../../../src/mcp/tools/claude.ts';
import { tempDir } from '../../helpers/temp.ts';
import { type Connected, connect, textOf } from '../helpers/connect.ts';

const dir = tempDir('rlm-mcp-claude-');
let s: Connected;

beforeAll(async () => {
  const projects = join(dir, 'projects');
  writeSession(projects, '/home/ana/my-app', {
    session: 'sess-login',
    cwd: '/home/ana/my-app',
    branch: 'fix-login',
    exchanges: [
      {
        user: 'The login test is flaky on CI',
        assistant: 'It raced the session cookie; awaiting the redirect fixed it.',
        time: '2026-03-02T09:00:00.000Z',
      },
    ],
  });
  writeSession(projects, '/srv/api', {
    session: 'sess-api',
    exchanges: [
      { user: 'Reports are off by one hour', assistant: 'Parse dates as UTC.', time: '2026-02-10T10:00:00Z' },
    ],
  });
  const store = await ChunkStore.open(join(dir, 'store'), { create: true });
  await importClaude(store, { projectsDir: projects });
  await store.close();
  s = await connect({ cwd: dir, env: { RLM_STORE: 'store' } });
  await s.client.listTools(); // the client checks structured results against the listed output schemas
});
afterAll(async () => {
  await s.close();
});

describe('Claude Code history tools', () => {
  it('describe when to use them', async () => {
    const { tools } = await s.client.listTools();
    const recall = tools.find((t) => t.name === 'rlm_claude_recall')!;
    expect(recall.description).toMatch(/past Claude Code conversations/);
    expect(recall.description).toMatch(/how did I fix/);
    expect(recall.outputSchema).toBeDefined();
    expect(tools.find((t) => t.name === 'rlm_claude_timeline')!.description).toMatch(/what did I work on/);
  });

  it('rlm_claude_recall returns exchanges with session, project, time and text', async () => {
    const r = await s.call('rlm_claude_recall', { query: 'how did I fix the flaky login test', k: 3 });
    expect(r.isError).toBeFalsy();
    const out = claudeRecallOutput.parse(r.structuredContent);
    expect(out.results[0]).toMatchObject({
      session: 'sess-login',
      project: '/home/ana/my-app',
      time: '2026-03-02T09:00:00.000Z',
      branch: 'fix-login',
      agent: null,
    });
    expect(textOf(r)).toContain('awaiting the redirect');
  });

  it('rlm_claude_timeline and rlm_claude_projects list sessions and projects', async () => {
    const t = claudeTimelineOutput.parse(
      (await s.call('rlm_claude_timeline', { since: '2026-03-01' })).structuredContent,
    );
    expect(t.sessions.map((x) => x.session)).toEqual(['sess-login']);
    const p = claudeProjectsOutput.parse((await s.call('rlm_claude_projects', {})).structuredContent);
    // sess-api has no cwd: its folder name is decoded
    expect(p.projects.map((x) => x.project)).toEqual(['/home/ana/my-app', '/srv/api']);
  });

  it('reports a bad filter as a tool error the caller can fix', async () => {
    const r = await s.call('rlm_claude_timeline', { project: 'nowhere' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/rlm_claude_timeline: no imported project matches 'nowhere'.*\[BAD_INPUT\]/);
  });
});
