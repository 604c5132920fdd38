import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../../memory/files/store.ts';
import { scanPaths } from '../../../memory/ingest/files.ts';
import { tempDir } from '../../helpers/temp.ts';

const servers: net.Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

describe('scanning folders with odd entries', () => {
  it('tells a symlink loop from a broken symlink, inside a folder and given by name', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'rlm-links-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    writeFileSync(path.join(root, 'a.md'), '# A\n');
    symlinkSync(path.join(root, 'self'), path.join(root, 'self'));
    symlinkSync(path.join(root, 'pong'), path.join(root, 'ping'));
    symlinkSync(path.join(root, 'ping'), path.join(root, 'pong'));
    symlinkSync(path.join(root, 'gone.txt'), path.join(root, 'dangling'));
    const scan = await scanPaths([root]);
    expect(scan.files.map((f) => path.basename(f.path))).toEqual(['a.md']);
    expect(scan.notes).toEqual([
      { path: path.join(root, 'dangling'), note: 'broken symlink skipped' },
      { path: path.join(root, 'ping'), note: 'symlink loop skipped' },
      { path: path.join(root, 'pong'), note: 'symlink loop skipped' },
      { path: path.join(root, 'self'), note: 'symlink loop skipped' },
    ]);
    expect((await scanPaths([path.join(root, 'self')])).notes).toEqual([
      { path: path.join(root, 'self'), note: 'symlink loop skipped' },
    ]);
  });

  it('skips a FIFO (never opened), a socket and a dangling symlink with notes, and ingests the rest', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'a.md'), '# A\n\nriver stones\n');
    execFileSync('mkfifo', [path.join(root, 'pipe')]);
    const sock = path.join(root, 'sock');
    await new Promise<void>((ok) => {
      const server = net.createServer().listen(sock, ok);
      servers.push(server);
    });
    symlinkSync(path.join(root, 'gone.txt'), path.join(root, 'dangling'));
    const scan = await scanPaths([root]);
    expect(scan.files.map((f) => path.basename(f.path))).toEqual(['a.md']);
    expect(scan.notes).toEqual([
      { path: path.join(root, 'dangling'), note: 'broken symlink skipped' },
      { path: path.join(root, 'pipe'), note: 'FIFO (named pipe) skipped (not a regular file; never opened)' },
      { path: path.join(root, 'sock'), note: 'socket skipped (not a regular file; never opened)' },
    ]);
    // A FIFO given by name is not opened either (opening it for reading would block forever).
    const given = await scanPaths([path.join(root, 'pipe')]);
    expect(given.files).toEqual([]);
    expect(given.notes[0]!.note).toMatch(/^FIFO/);

    const store = await ChunkStore.open(path.join(tempDir(), 'store'), { create: true });
    const report = await store.ingestPaths([root]);
    expect(report.added).toBe(1);
    expect(report.notes).toHaveLength(3);
    await store.close();
  });

  it('says a file whose name is not UTF-8 cannot be opened by name, not that it vanished', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'a.md'), '# A\n');
    writeFileSync(
      Buffer.concat([Buffer.from(`${root}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]),
      'hi\n',
    );
    const scan = await scanPaths([root]);
    expect(scan.files.map((f) => path.basename(f.path))).toEqual(['a.md']);
    expect(scan.notes).toEqual([
      {
        path: path.join(root, 'caf\uFFFD.txt'),
        note: 'its name is not valid UTF-8, so it cannot be opened by name; rename it to ingest it',
      },
    ]);
  });

  it('honours .gitignore, .rlmignore and exclude patterns, and counts what it left out', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'src', 'gen'), { recursive: true });
    mkdirSync(path.join(root, 'node_modules', 'pkg'), { recursive: true });
    mkdirSync(path.join(root, '.cache'));
    writeFileSync(path.join(root, '.gitignore'), 'dist/\n*.log\n');
    writeFileSync(path.join(root, 'src', '.rlmignore'), 'gen/\n');
    writeFileSync(path.join(root, 'keep.md'), 'x');
    writeFileSync(path.join(root, 'debug.log'), 'x');
    writeFileSync(path.join(root, 'notes.tmp'), 'x');
    writeFileSync(path.join(root, 'src', 'main.ts'), 'x');
    writeFileSync(path.join(root, 'src', 'gen', 'out.ts'), 'x');
    writeFileSync(path.join(root, 'node_modules', 'pkg', 'index.js'), 'x');
    writeFileSync(path.join(root, '.cache', 'c.txt'), 'x');

    const scan = await scanPaths([root], { exclude: ['*.tmp'] });
    expect(scan.files.map((f) => path.relative(root, f.path))).toEqual([
      'keep.md',
      path.join('src', 'main.ts'),
    ]);
    // .cache and .gitignore (hidden), node_modules, debug.log and src/gen (ignored), notes.tmp (excluded).
    expect(scan.passedOver).toEqual({ hidden: 3, folders: 1, ignored: 2, excluded: 1 });

    const all = await scanPaths([root], { noIgnore: true, includeHidden: true });
    expect(all.files.map((f) => path.relative(root, f.path))).toEqual([
      path.join('.cache', 'c.txt'),
      '.gitignore',
      'debug.log',
      'keep.md',
      path.join('node_modules', 'pkg', 'index.js'),
      'notes.tmp',
      path.join('src', '.rlmignore'),
      path.join('src', 'gen', 'out.ts'),
      path.join('src', 'main.ts'),
    ]);
    expect(all.passedOver).toEqual({ hidden: 0, folders: 0, ignored: 0, excluded: 0 });
  });

  it('reads .gz text files inflated and chunks them by the inner extension', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'notes.md.gz'), gzipSync('# Title\n\nThe zeppelin landed at noon.\n'));
    writeFileSync(path.join(root, 'broken.txt.gz'), 'not gzip at all');
    const store = await ChunkStore.open(path.join(tempDir(), 'store'), { create: true });
    const report = await store.ingestPaths([root]);
    expect(report.added).toBe(1);
    expect(report.notes).toEqual([
      {
        path: path.join(root, 'broken.txt.gz'),
        note: expect.stringMatching(/^binary file skipped \(\.gz does not inflate/),
      },
    ]);
    const [hit] = await store.search('zeppelin');
    expect(hit).toMatchObject({ path: path.join(root, 'notes.md.gz') });
    expect((await store.getChunk(hit!.id))!.section).toBe('Title');
    await store.close();
  });
});
