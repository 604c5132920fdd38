/**
 * The CLI over a PostgreSQL store: every store command takes a postgres:// URL where it takes a folder,
 * prints the same JSON shapes, never shows the password, and turns connection problems into one clear
 * line with exit 1 (exit 2 for what the user named wrong: the URL itself, a missing database).
 */
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  adminQuery,
  freshSchemaUrl,
  postgresAvailable,
  postgresUrl,
  withSchema,
} from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp.ts';
import { writeSampleCorpus } from '../memory/helpers/corpus.ts';
import { cli } from './helpers.ts';

function password(url: string): string {
  return decodeURIComponent(new URL(url).password);
}

/** Output of a run as one text, for checks that the password never shows. */
function shown(r: { stdout: string; stderr: string }): string {
  return r.stdout + r.stderr;
}

/** A port on 127.0.0.1 nobody listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(!postgresAvailable('cli postgres'))('rlm on a PostgreSQL store', () => {
  it('runs the store commands on a URL with the folder store’s JSON shapes, and copies to a folder and back', async () => {
    const url = freshSchemaUrl();
    const secret = password(url);
    const root = tempDir();
    const corpus = writeSampleCorpus(root);
    const folder = path.join(root, 'folder-store');
    const runs = [];
    const both = async (args: string[]) => {
      const pg = await cli([...args, '--store', url, '--json']);
      const fs = await cli([...args, '--store', folder, '--json']);
      runs.push(pg, fs);
      expect(pg.code, pg.stderr).toBe(0);
      expect(fs.code, fs.stderr).toBe(0);
      return [pg.json(), fs.json()] as const;
    };
    const keys = (v: unknown) => Object.keys(v as object).sort();
    const [ingested, ingestedFs] = await both(['ingest', corpus]);
    expect(keys(ingested)).toEqual(keys(ingestedFs));
    expect(ingested).toMatchObject({ documents: 4, added: 4 });
    const [found, foundFs] = await both(['search', 'flimflam keys', '-k', '3']);
    const hits = (found as { results: { id: string }[] }).results;
    expect(hits.map((h) => h.id)).toEqual(
      (foundFs as { results: { id: string }[] }).results.map((h) => h.id),
    );
    const [peeked, peekedFs] = await both(['peek', hits[0]!.id]);
    expect(keys(peeked)).toEqual(keys(peekedFs));
    // A document id reads the whole document, and lists the links that leave it.
    const doc = hits[0]!.id.slice(0, hits[0]!.id.lastIndexOf(':'));
    const [whole, wholeFs] = await both(['peek', doc]);
    expect({ ...(whole as object), links: [] }).toEqual({ ...(wholeFs as object), links: [] });
    expect((whole as { links: unknown[] }).links.length).toBe((wholeFs as { links: unknown[] }).links.length);
    const [linked, linkedFs] = await both(['links', doc]);
    expect(keys(linked)).toEqual(keys(linkedFs));
    expect((linked as { id: string }).id).toBe(doc);
    const [grepped, greppedFs] = await both(['grep', 'quark\\w+']);
    expect(grepped).toEqual(greppedFs);
    const [listed] = await both(['ls']);
    expect((listed as { documents: unknown[] }).documents).toHaveLength(4);
    const [remembered] = await both(['remember', 'we deploy on fridays', '--topic', 'ops']);
    expect(remembered).toMatchObject({ topic: 'ops' });
    const [recalled] = await both(['recall', 'deploy']);
    expect((recalled as { results: { text: string }[] }).results[0]?.text).toBe('we deploy on fridays');
    const [topics, topicsFs] = await both(['topics']);
    expect(topics).toEqual(topicsFs);
    const [stats, statsFs] = await both(['stats']);
    expect(keys(stats)).toEqual(keys(statsFs));
    expect((stats as { dir: string }).dir).toBe(url.replace(`:${encodeURIComponent(secret)}@`, ':***@'));

    const back = withSchema(`${new URL(url).searchParams.get('schema')}_back`);
    onTestFinished(async () => {
      await adminQuery(`DROP SCHEMA IF EXISTS ${new URL(back).searchParams.get('schema')} CASCADE`);
    });
    const copied = await cli(['store', 'copy', url, path.join(root, 'copy'), '--json']);
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.json()).toMatchObject({ documents: 5, memories: 1 });
    const returned = await cli(['store', 'copy', path.join(root, 'copy'), back]);
    expect(returned.code, returned.stderr).toBe(0);
    expect(returned.stdout).toMatch(/^copied .* 5 documents, \d+ chunks, \d+ links, 1 memory /);
    runs.push(copied, returned);
    const [removed, removedFs] = await both(['rm', doc]);
    expect(removed).toEqual(removedFs);
    expect(removed).toMatchObject({ removed: true, ids: [doc] });
    for (const r of runs) expect(shown(r)).not.toContain(secret);
  });

  it('says in one line what is wrong with the server, the login, the database or the permissions', async () => {
    const base = new URL(postgresUrl!);
    const secret = password(postgresUrl!);
    const at = (change: (u: URL) => void) => {
      const u = new URL(base);
      change(u);
      return u.toString();
    };
    const port = await closedPort();
    const role = `rlm_noperm_${process.pid}`;
    await adminQuery(`CREATE ROLE ${role} LOGIN PASSWORD 'weak-but-right'`);
    onTestFinished(async () => {
      await adminQuery(`DROP ROLE IF EXISTS ${role}`);
    });
    const cases: [string, number, RegExp][] = [
      [
        at((u) => (u.port = String(port))),
        1,
        /cannot reach PostgreSQL at 127\.0\.0\.1:\d+ \(connection refused/,
      ],
      [at((u) => (u.password = 'not-the-password')), 1, /refused the login of user "rlm"/],
      [at((u) => (u.pathname = '/no_such_db')), 2, /database "no_such_db" does not exist/],
      [
        at((u) => {
          u.username = role;
          u.password = 'weak-but-right';
          u.searchParams.set('schema', `t_noperm_${process.pid}`);
        }),
        1,
        new RegExp(`user "${role}" lacks a permission on store`),
      ],
      ['postgres://', 2, /store URL .* names no host|not a valid store URL/],
    ];
    for (const [url, code, message] of cases) {
      const r = await cli(['ingest', writeSampleCorpus(tempDir()), '--store', url]);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(shown(r)).not.toContain(secret);
      expect(shown(r)).not.toContain('not-the-password');
      expect(shown(r)).not.toContain('weak-but-right');
    }
  });
});
