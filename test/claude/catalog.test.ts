import { describe, expect, it } from 'vitest';
import { MemoryChunkStore } from '../../memory/in-memory/store.ts';
import type { ImportedDocument } from '../../memory/types.ts';
import { listProjects, recall, timeline } from '../../src/claude/catalog.ts';

/** A part as an import before times were normalised stored it: times as the session file wrote them. */
function part(id: string, text: string, first: string, last: string, agent?: string): ImportedDocument {
  return {
    id,
    path: `/p/-srv-tz/${id}.jsonl`,
    text,
    drafts: [{ text, start: 0, end: text.length, tokens: 8, time: first, tags: ['role:exchange'] }],
    tags: ['claude', 'session:sess-tz', 'project:/srv/tz', ...(agent ? [`agent:${agent}`] : [])],
    meta: {
      source: 'claude-code',
      file: `/p/-srv-tz/${id}.jsonl`,
      session: 'sess-tz',
      project: '/srv/tz',
      from: 0,
      to: 100,
      lines: 2,
      exchanges: 1,
      first,
      last,
      ...(agent ? { agent } : {}),
    },
  };
}

describe('the catalog of imported sessions', () => {
  it('gives times as toISOString writes them, and orders them as instants, for parts stored as written', async () => {
    const store = new MemoryChunkStore();
    await store.importDocuments(async function* () {
      yield {
        add: part(
          'main',
          'User: main question about clocks',
          '2026-03-02T10:00:00.000Z',
          '2026-03-02T10:01:00.500Z',
        ),
      };
      // As strings, '10:01:00Z' sorts after '10:01:00.500Z', though it is half a second earlier.
      yield {
        add: part(
          'sub',
          'User: subagent question about clocks',
          '2026-03-02T11:00:30+01:00',
          '2026-03-02T10:01:00Z',
          '7',
        ),
      };
    });
    expect(await timeline(store)).toEqual([
      expect.objectContaining({
        start: '2026-03-02T10:00:00.000Z',
        end: '2026-03-02T10:01:00.500Z',
        subagents: 1,
      }),
    ]);
    expect(await listProjects(store)).toEqual([
      expect.objectContaining({ first: '2026-03-02T10:00:00.000Z', last: '2026-03-02T10:01:00.500Z' }),
    ]);
    const times = (await recall(store, 'question about clocks', { k: 2 })).results.map((h) => h.time).sort();
    expect(times).toEqual(['2026-03-02T10:00:00.000Z', '2026-03-02T10:00:30.000Z']);
  });
});
