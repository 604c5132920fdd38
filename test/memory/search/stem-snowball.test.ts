/**
 * Differential test of the stemmers against the Snowball project's reference output: its full English and
 * French vocabulary lists (test/fixtures/snowball/README.md says which version). Every word must get
 * exactly the reference stem; a difference is either a bug or a departure to document in the stemmer file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { stemEnglish } from '../../../memory/search/stem-en.ts';
import { stemFrench } from '../../../memory/search/stem-fr.ts';

const DIR = path.resolve(import.meta.dirname, '../../fixtures/snowball');

function pairs(file: string): [string, string][] {
  return gunzipSync(readFileSync(path.join(DIR, file)))
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t') as [string, string]);
}

describe.each([
  ['English', 'english.tsv.gz', stemEnglish, 42_649],
  ['French', 'french.tsv.gz', stemFrench, 21_655],
] as const)('%s stemmer vs the Snowball reference vocabulary', (_name, file, stem, size) => {
  const table = pairs(file);

  it('has the whole list (one word and one stem per line)', () => {
    expect(table.length).toBe(size);
    expect(table.every((p) => p.length === 2 && p[0] !== '' && p[1] !== '')).toBe(true);
  });

  it('gives exactly the reference stem for every word', () => {
    const differ = table.filter(([word, expected]) => stem(word) !== expected);
    // Listed in full on failure: word, rlm's stem, Snowball's stem.
    expect(differ.map(([word, expected]) => `${word}: ${stem(word)} ≠ ${expected}`)).toEqual([]);
  });
});
