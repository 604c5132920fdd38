import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeFolderName } from '../../src/claude/files.ts';
import { type FileLine, readLines } from '../../src/claude/lines.ts';
import { shorten } from '../../src/claude/reader.ts';
import { tempDir } from '../helpers/temp.ts';

const dir = tempDir('rlm-lines-');

async function all(file: string, from = 0, before = 0, bytes?: number): Promise<FileLine[]> {
  const out: FileLine[] = [];
  for await (const l of readLines(file, from, before, bytes)) out.push(l);
  return out;
}

describe('readLines', () => {
  it('gives byte spans across read boundaries, CRLF and multi-byte text, and flags an unfinished last line', async () => {
    const file = join(dir, 'a.jsonl');
    const long = 'é'.repeat(40);
    writeFileSync(file, `ab\r\n${long}\n\nlast`);
    const lines = await all(file, 0, 0, 7);
    expect(lines.map((l) => [l.text, l.start, l.end, l.number, l.complete])).toEqual([
      ['ab', 0, 4, 1, true],
      [long, 4, 85, 2, true],
      ['', 85, 86, 3, true],
      ['last', 86, 90, 4, false],
    ]);
    expect((await all(file, 85, 2)).map((l) => [l.text, l.number])).toEqual([
      ['', 3],
      ['last', 4],
    ]);
  });
});

describe('helpers', () => {
  it('decodes a folder name only as a guess', () => {
    expect(decodeFolderName('-home-ana-my-app')).toBe('/home/ana/my/app');
    expect(decodeFolderName('C--Users-ana-app')).toBe('C:\\Users\\ana\\app');
  });
  it('shortens titles at a word', () => {
    expect(shorten('  fix   the\nlogin test  ')).toBe('fix the login test');
    expect(shorten(`${'word '.repeat(30)}end`, 20)).toBe('word word word word…');
  });
});
