import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandHome } from '../../memory/fsutil.ts';
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
});
