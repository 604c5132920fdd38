import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { RlmError } from '../../core/errors.ts';
import { ChunkStore } from '../../memory/files/store.ts';
import { expandHome } from '../../memory/fsutil.ts';
import { withStore } from '../../src/cli/store-arg.ts';
import { tempDir } from '../helpers/temp.ts';
import { cli } from './helpers.ts';

describe('the --store folder', () => {
  it('expands ~ in --store and RLM_STORE instead of creating a folder named ~', async () => {
    const home = tempDir();
    const cwd = tempDir();
    const doc = path.join(cwd, 'a.md');
    writeFileSync(doc, '# A\n\nriver stones\n');
    const flag = await cli(['ingest', doc, '--store', '~/flag-store'], { env: { HOME: home }, cwd });
    expect(flag.code, flag.stderr).toBe(0);
    expect(existsSync(path.join(home, 'flag-store', 'rlm-store.json'))).toBe(true);
    const env = await cli(['search', 'river', '--json'], {
      env: { HOME: home, RLM_STORE: '~/flag-store' },
      cwd,
    });
    expect(env.code, env.stderr).toBe(0);
    expect(existsSync(path.join(cwd, '~'))).toBe(false);
    expect(expandHome('~', '/h')).toBe('/h');
    expect(expandHome('~/x/y', '/h')).toBe('/h/x/y');
    expect(expandHome('~other/x', '/h')).toBe('~other/x');
    expect(expandHome('a/~/b', '/h')).toBe('a/~/b');
  });

  it('refuses to make a store in a non-empty folder that is not one, unless --create', async () => {
    const root = tempDir();
    const doc = path.join(root, 'a.md');
    writeFileSync(doc, 'river stones\n');
    const mine = path.join(root, 'my-notes');
    mkdirSync(mine);
    writeFileSync(path.join(mine, 'todo.txt'), 'buy milk\n');
    const refused = await cli(['ingest', doc, '--store', mine]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is not an rlm store and is not empty; pass --create/);
    expect(existsSync(path.join(mine, 'rlm-store.json'))).toBe(false);
    const forced = await cli(['ingest', doc, '--store', mine, '--create']);
    expect(forced.code, forced.stderr).toBe(0);
    // Once it is a store, later ingests need no flag.
    expect((await cli(['ingest', doc, '--store', mine])).code).toBe(0);
  });

  it('holds for remember too', async () => {
    const mine = tempDir();
    writeFileSync(path.join(mine, 'todo.txt'), 'buy milk\n');
    const refused = await cli(['remember', 'we chose postgres', '--store', mine]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is not an rlm store and is not empty; pass --create/);
    expect(existsSync(path.join(mine, 'rlm-store.json'))).toBe(false);
    const forced = await cli(['remember', 'we chose postgres', '--store', mine, '--create']);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await cli(['remember', 'and redis for the queue', '--store', mine])).code).toBe(0);
  });

  it('takes a folder holding only what a process making a store leaves on the way for that store', async () => {
    const making = tempDir();
    // Another writer got this far making the store: a temp file not yet renamed into place.
    writeFileSync(path.join(making, 'documents-00000001.json.tmp-4242-0123abcd'), '{}');
    const r = await cli(['remember', 'made alongside', '--store', making]);
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('withStore', () => {
  const io = (cwd: string) => ({
    stdout: { write: () => true },
    stderr: { write: () => true },
    stdin: process.stdin,
    env: {},
    cwd,
  });

  it('removes a store it created when the command fails before storing anything, and only then', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'rlm-withstore-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const failing = async () => {
      throw new RlmError('ABORTED', 'interrupted');
    };
    const fresh = path.join(root, 'fresh');
    await expect(withStore(fresh, io(root), {}, failing)).rejects.toThrow('interrupted');
    expect(existsSync(fresh)).toBe(false);

    // A store that was there already is never removed, even empty.
    const existing = path.join(root, 'existing');
    await (await ChunkStore.open(existing, { create: true })).close();
    await expect(withStore(existing, io(root), {}, failing)).rejects.toThrow('interrupted');
    expect(existsSync(path.join(existing, 'rlm-store.json'))).toBe(true);

    // Nor one the failed command had already stored something in.
    const partial = path.join(root, 'partial');
    await expect(
      withStore(partial, io(root), {}, async (store) => {
        await store.remember({ text: 'kept' });
        return failing();
      }),
    ).rejects.toThrow('interrupted');
    expect(existsSync(path.join(partial, 'rlm-store.json'))).toBe(true);
  });
});

describe('a store named by a URL of another kind', () => {
  it('is refused with its password hidden, and no folder is made after it', async () => {
    const cwd = tempDir();
    for (const url of ['postgress://ana:s3cret@127.0.0.1:5432/rlm', 'mysql://ana:s3cret@db/rlm']) {
      for (const args of [['stats'], ['remember', 'x']]) {
        const r = await cli([...args, '--store', url], { cwd });
        expect(r.code, `${args[0]} ${url}`).toBe(2);
        expect(r.stderr).toMatch(
          /rlm stores in a folder or a PostgreSQL database \(postgres:\/\/…\); not in a URL of this kind \[BAD_INPUT\]\n$/,
        );
        expect(r.stderr).toContain('ana:***@');
        expect(r.stderr).not.toContain('s3cret');
      }
    }
    expect(readdirSync(cwd)).toEqual([]);
  });
});
