/**
 * The MCP server on PostgreSQL stores: the default store may be a URL, a caller may name another URL
 * only when the server allows it (`--allow-store`), and no result shows a password.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshSchemaUrl, postgresAvailable } from '../helpers/postgres.ts';
import { connect, textOf } from './helpers/connect.ts';

describe.skipIf(!postgresAvailable('mcp postgres'))('MCP server with a PostgreSQL store', () => {
  it('serves the tools on a URL store, fences other URLs, and never shows the password', async () => {
    const url = freshSchemaUrl();
    const other = freshSchemaUrl();
    const secret = decodeURIComponent(new URL(url).password);
    const s = await connect({ env: { RLM_STORE: url }, allowStores: [other] });
    onTestFinished(() => s.close());
    const said: string[] = [];
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await s.call(name, args);
      said.push(JSON.stringify(r));
      return r;
    };
    expect(
      (await call('rlm_remember', { text: 'the build runs on fridays', topic: 'ci' })).isError,
    ).toBeFalsy();
    const topics = await call('rlm_topics', {});
    expect(topics.isError, textOf(topics)).toBeFalsy();
    expect(topics.structuredContent).toEqual({ topics: [{ topic: 'ci', memories: 1, archived: 0 }] });
    const recalled = await call('rlm_recall', { query: 'build friday' });
    expect(JSON.stringify(recalled.structuredContent)).toContain('the build runs on fridays');
    const searched = await call('rlm_search', { query: 'build' });
    const results = (searched.structuredContent as { results: { document: string }[] }).results;
    expect(results).toHaveLength(1);
    // rlm_peek takes the memory's id for the whole memory, sliced by start/end.
    const peeked = await call('rlm_peek', { id: results[0]!.document, start: 4, end: 9 });
    expect(peeked.isError, textOf(peeked)).toBeFalsy();
    expect(peeked.structuredContent).toMatchObject({
      id: results[0]!.document,
      text: 'build',
      range: { start: 4, end: 9, chars: 'the build runs on fridays'.length },
    });
    const status = (await call('rlm_status', {})).structuredContent as {
      defaults: { store: string };
      store: { dir: string; documents: number };
    };
    expect(status.defaults.store).toContain(':***@');
    expect(status.store).toMatchObject({ documents: 1 });
    expect(status.store.dir).toContain(':***@');
    // A URL the server was not given is refused; an allowed one is served.
    const denied = await call('rlm_topics', { store: freshSchemaUrl() });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/is not one this server may open.*--allow-store/);
    const allowed = await call('rlm_remember', { text: 'other store memory', store: other });
    expect(allowed.isError, textOf(allowed)).toBeFalsy();
    for (const text of [...said, ...s.logs]) expect(text).not.toContain(secret);
  });
});
