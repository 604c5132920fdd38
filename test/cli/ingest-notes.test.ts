import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { cli } from './helpers.ts';

function folder(): string {
  const root = tempDir();
  const docs = path.join(root, 'docs');
  mkdirSync(path.join(docs, 'node_modules', 'x'), { recursive: true });
  mkdirSync(path.join(docs, '.git'));
  writeFileSync(path.join(docs, '.gitignore'), 'build.log\n');
  writeFileSync(path.join(docs, 'build.log'), 'noise');
  writeFileSync(path.join(docs, 'a.md'), '# A\n\ntext\n');
  writeFileSync(path.join(docs, 'draft.md'), '# Draft\n');
  writeFileSync(path.join(docs, 'node_modules', 'x', 'i.js'), 'x');
  for (let i = 0; i < 3; i++) writeFileSync(path.join(docs, `img${i}.png`), 'png');
  return root;
}

describe('rlm ingest notes', () => {
  it('counts binary files in one line, says what the scan left out and which flag takes it', async () => {
    const root = folder();
    const r = await cli(['ingest', 'docs', '--store', 'store', '--exclude', 'draft.md'], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      'rlm: 3 binary files skipped (--verbose lists them)',
      'rlm: left out 2 dot-files and folders (--include-hidden), 1 node_modules folder (--no-ignore), 1 path in .gitignore/.rlmignore (--no-ignore), 1 path matching --exclude',
    ]);
    expect(r.stdout).toMatch(/^1 added/);
    const json = await cli(['ingest', 'docs', '--store', 'store2', '--json'], { cwd: root });
    expect(Object.keys(json.json())).not.toContain('passedOver');
  });

  it('lists binary files with --verbose and takes everything with --include-hidden --no-ignore', async () => {
    const root = folder();
    const r = await cli(
      ['ingest', 'docs', '--store', 'store', '--verbose', '--include-hidden', '--no-ignore'],
      {
        cwd: root,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => /^rlm: note: .*img\d\.png: binary file \(\.png\) skipped$/.test(l))).toBe(true);
    // a.md, draft.md, build.log, .gitignore and node_modules/x/i.js
    expect(r.stdout).toMatch(/^5 added/);
  });
});

describe('rlm ingest of nothing readable', () => {
  it('exits 2 saying so, and leaves no store it made; into a store that holds documents it is 0 added', async () => {
    const root = folder();
    mkdirSync(path.join(root, 'empty'));
    writeFileSync(path.join(root, 'blob.bin'), Buffer.from([0, 1, 2, 0, 255, 0]));
    for (const what of ['empty', 'blob.bin']) {
      const r = await cli(['ingest', what, '--store', 'fresh'], { cwd: root });
      expect(r.code, what).toBe(2);
      expect(r.stderr, what).toContain(
        `rlm: nothing to ingest: no text could be read from ${path.join(root, what)}`,
      );
      expect(r.stderr, what).toMatch(/nothing was stored \[BAD_INPUT\]\n$/);
      expect(existsSync(path.join(root, 'fresh')), what).toBe(false);
    }
    expect((await cli(['ingest', 'docs', '--store', 'full'], { cwd: root })).code).toBe(0);
    const into = await cli(['ingest', 'empty', '--store', 'full'], { cwd: root });
    expect(into.code, into.stderr).toBe(0);
    expect(into.stdout).toMatch(/^0 added/);
  });
});
