import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../memory/fsutil.ts';
import { tempDir } from '../helpers/temp.ts';

describe('writeFileAtomic with pieces', () => {
  it('writes the pieces in order, whatever their sizes and characters', async () => {
    const dir = tempDir();
    const pieces = [
      '',
      'start ',
      ...Array.from({ length: 3000 }, (_, i) => `piece ${i} café 日本 😀\n`),
      // Larger than the write buffer on its own, and multi-byte throughout.
      'é'.repeat(300_000),
      'x'.repeat(100_000),
      '日'.repeat(90_000),
      ' end',
    ];
    const file = path.join(dir, 'out.json');
    await writeFileAtomic(file, pieces);
    expect(readFileSync(file, 'utf8')).toBe(pieces.join(''));
    await writeFileAtomic(file, (function* () {})());
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('keeps the old file and leaves no temp file when the pieces fail midway', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'seg.json');
    writeFileSync(file, 'old content');
    function* failing(): Generator<string> {
      for (let i = 0; i < 2000; i++) yield `${'y'.repeat(1000)}\n`;
      throw new Error('disk on fire');
    }
    await expect(writeFileAtomic(file, failing())).rejects.toThrow('disk on fire');
    expect(readFileSync(file, 'utf8')).toBe('old content');
    expect(readdirSync(dir)).toEqual(['seg.json']);
  });

  it('names the file asked for, not its temp file, when it cannot be made', async () => {
    const file = path.join(tempDir(), 'missing', 'page.html');
    const err = (await writeFileAtomic(file, 'x').catch((e: unknown) => e)) as NodeJS.ErrnoException;
    expect(err.code).toBe('ENOENT');
    expect(err.path).toBe(file);
    expect(err.message).toBe(`ENOENT: no such file or directory, open '${file}'`);
  });
});
