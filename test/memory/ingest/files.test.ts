import { createHash } from 'node:crypto';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isRlmError } from '../../../core/errors.ts';
import { contentHash, documentIdFor, scanPaths } from '../../../memory/ingest/files.ts';
import { decodeDocument, readDocument } from '../../../memory/ingest/read-document.ts';
import { tempDir } from '../../helpers/temp.ts';

let root: string;

beforeAll(async () => {
  root = tempDir('rlm-files-');
  await mkdir(join(root, 'docs', 'deep'), { recursive: true });
  await mkdir(join(root, '.git'), { recursive: true });
  await mkdir(join(root, '.rlm'), { recursive: true });
  await mkdir(join(root, 'node_modules', 'pkg'), { recursive: true });
  await writeFile(join(root, 'docs', 'b.md'), '# B\n');
  await writeFile(join(root, 'docs', 'a.txt'), 'hello');
  await writeFile(join(root, 'docs', 'deep', 'c.log'), 'x\ny\n');
  await writeFile(join(root, 'docs', '.hidden'), 'secret');
  await writeFile(join(root, '.git', 'HEAD'), 'ref');
  await writeFile(join(root, '.rlm', 'store.json'), '{}');
  await writeFile(join(root, 'node_modules', 'pkg', 'index.js'), '');
  // A loop: docs/deep/up -> docs
  await symlink(join(root, 'docs'), join(root, 'docs', 'deep', 'up'));
});

describe('scanPaths', () => {
  it('walks folders recursively, sorted, skipping dot-dirs, node_modules and symlink loops', async () => {
    const { files, notes } = await scanPaths([root]);
    expect(files.map((f) => f.path)).toEqual([
      join(root, 'docs', 'a.txt'),
      join(root, 'docs', 'b.md'),
      join(root, 'docs', 'deep', 'c.log'),
    ]);
    expect(files.map((f) => f.bytes)).toEqual([5, 4, 4]);
    expect(notes).toEqual([{ path: join(root, 'docs', 'deep', 'up'), note: 'symlink loop skipped' }]);
  });

  it('returns absolute paths for relative input and takes explicit hidden files', async () => {
    const rel = relative(process.cwd(), join(root, 'docs', '.hidden'));
    expect(isAbsolute(rel)).toBe(false);
    const { files } = await scanPaths([rel, join(root, 'docs', 'a.txt'), join(root, 'docs', 'a.txt')]);
    expect(files.map((f) => f.path)).toEqual([join(root, 'docs', '.hidden'), join(root, 'docs', 'a.txt')]);
  });

  it('includes hidden entries on request', async () => {
    const { files } = await scanPaths([join(root, 'docs')], { includeHidden: true });
    expect(files.map((f) => f.path)).toContain(join(root, 'docs', '.hidden'));
  });

  it('stops at a byte or entry bound and says so', async () => {
    const all = await scanPaths([root]);
    expect(all.truncated).toBeUndefined();
    const bytes = await scanPaths([root], { maxBytes: 8 });
    expect(bytes.truncated).toBe('bytes');
    expect(bytes.files.map((f) => f.bytes)).toEqual([5, 4]);
    const entries = await scanPaths([root], { maxEntries: 2 });
    expect(entries.truncated).toBe('entries');
    expect(entries.files.length).toBeLessThan(all.files.length);
    expect((await scanPaths([root], { maxBytes: 13, maxEntries: 100 })).truncated).toBeUndefined();
  });

  it('stops with ABORTED when its signal fires', async () => {
    const err = await scanPaths([root], { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isRlmError(err, 'ABORTED')).toBe(true);
  });

  it('fails with BAD_INPUT on a missing path', async () => {
    const missing = join(root, 'nope.txt');
    const err = await scanPaths([missing]).catch((e: unknown) => e);
    expect(isRlmError(err, 'BAD_INPUT')).toBe(true);
    expect((err as Error).message).toBe(`no such file or directory: ${missing}`);
  });
});

describe('readDocument', () => {
  it('reads UTF-8 and strips a BOM', async () => {
    const file = join(root, 'bom.txt');
    await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo', 'utf8')]));
    expect(await readDocument(file)).toEqual({ text: 'héllo', notes: [] });
  });

  it('replaces invalid UTF-8 and says where', async () => {
    const file = join(root, 'bad.txt');
    // two invalid sequences, plus a genuine U+FFFD that must not be counted
    await writeFile(
      file,
      Buffer.concat([Buffer.from('a'), Buffer.from([0xff]), Buffer.from('b\uFFFDc'), Buffer.from([0xc3])]),
    );
    const doc = await readDocument(file);
    expect(doc).toEqual({ text: 'a\uFFFDb\uFFFDc\uFFFD', notes: ['invalid UTF-8 replaced at 2 places'] });
  });

  it('skips files with NUL bytes, control characters or binary extensions', async () => {
    const nul = join(root, 'data.txt');
    await writeFile(nul, Buffer.from([0x41, 0x00, 0x42]));
    expect(await readDocument(nul)).toEqual({ binary: true, note: 'binary file skipped (NUL bytes)' });
    const ctl = join(root, 'ctl.txt');
    await writeFile(ctl, Buffer.from(Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? 0x01 : 0x41))));
    expect(await readDocument(ctl)).toEqual({
      binary: true,
      note: 'binary file skipped (control characters)',
    });
    const png = join(root, 'pic.PNG');
    await writeFile(png, 'not really an image');
    expect(await readDocument(png)).toEqual({ binary: true, note: 'binary file (.png) skipped' });
  });

  it('keeps ANSI colour codes and tabs as text', async () => {
    const file = join(root, 'colors.log');
    await writeFile(file, '\u001b[31mred\u001b[0m\tok\n'.repeat(50));
    const doc = await readDocument(file);
    expect('text' in doc && doc.text.startsWith('\u001b[31mred')).toBe(true);
  });

  it('decodes UTF-16 with a BOM instead of calling it binary', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi é', 'utf16le')]);
    expect(decodeDocument(bytes)).toEqual({ text: 'hi é', notes: ['decoded as UTF-16LE'] });
  });

  it('reads a 50 MB single-line file', async () => {
    const file = join(root, 'big.txt');
    await writeFile(file, Buffer.alloc(50 * 1024 * 1024, 'x'));
    const doc = await readDocument(file);
    expect('text' in doc && doc.text.length).toBe(50 * 1024 * 1024);
    await rm(file);
  });

  it('reports a file that vanished or cannot be opened instead of failing the ingest', async () => {
    expect(await readDocument(join(root, 'missing.txt'))).toEqual({
      unreadable: true,
      note: 'vanished before it was read',
    });
    expect(await readDocument(join(root, 'docs', 'a.txt', 'below-a-file'))).toEqual({
      unreadable: true,
      note: 'unreadable (ENOTDIR), skipped',
    });
    expect(await readDocument(join(root, 'docs'))).toEqual({
      unreadable: true,
      note: 'special file skipped (not a regular file)',
    });
  });
});

describe('documentIdFor', () => {
  it('is a slug of the file name plus a hash of the absolute path', () => {
    const abs = '/home/ana/notes.md';
    const hash = createHash('sha1').update(abs).digest('hex').slice(0, 8);
    expect(documentIdFor(abs)).toBe(`notes-md-${hash}`);
  });

  it('is stable across relative and absolute spellings and differs by folder', () => {
    expect(documentIdFor('x/../notes.md')).toBe(documentIdFor(resolve('notes.md')));
    expect(documentIdFor('/a/notes.md')).not.toBe(documentIdFor('/b/notes.md'));
  });

  it('keeps only [a-z0-9-], at most 40 characters', () => {
    const id = documentIdFor(`/tmp/Ünïcödé Fïle (copy) ${'long-'.repeat(20)}.TXT`);
    const slug = id.slice(0, -9);
    expect(slug).toMatch(/^[a-z0-9-]+$/);
    expect(slug.length).toBeLessThanOrEqual(40);
    expect(slug.startsWith('unicode-file-copy-long')).toBe(true);
    expect(documentIdFor('/tmp/###')).toMatch(/^doc-[0-9a-f]{8}$/);
  });
});

describe('contentHash', () => {
  it('is the sha256 hex of the UTF-8 text, equal for text and its bytes', () => {
    const expected = createHash('sha256').update(Buffer.from('héllo', 'utf8')).digest('hex');
    expect(contentHash('héllo')).toBe(expected);
    expect(contentHash(Buffer.from('héllo', 'utf8'))).toBe(expected);
    expect(contentHash('a')).not.toBe(contentHash('b'));
  });
});
