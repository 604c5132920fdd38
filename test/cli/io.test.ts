import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/io.ts';
import { readStdin } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { tempDir } from '../memory/helpers/corpus.ts';

const TEXT = 'Quelle est la météo à Zürich? 東京 🌧️';

/** The text's bytes cut at every position, as a pipe may deliver them. */
function splits(text: string): Buffer[][] {
  const bytes = Buffer.from(text, 'utf8');
  return Array.from({ length: bytes.length - 1 }, (_, i) => [
    bytes.subarray(0, i + 1),
    bytes.subarray(i + 1),
  ]);
}

describe('readStdin', () => {
  it('decodes a UTF-8 character split across chunks at any byte', async () => {
    for (const chunks of splits(TEXT)) {
      expect(await readStdin({ stdin: Readable.from(chunks) })).toBe(TEXT);
    }
  });

  it('accepts string chunks and an empty stream', async () => {
    expect(await readStdin({ stdin: Readable.from(['a', 'é']) })).toBe('aé');
    expect(await readStdin({ stdin: Readable.from([]) })).toBe('');
  });

  it('gives `rlm answer -` the question intact when a character straddles two chunks', async () => {
    const root = tempDir();
    const rules = path.join(root, 'rules.json');
    writeFileSync(
      rules,
      JSON.stringify({ rules: [{ match: 'météo à Zürich\\? 東京', reply: 'FINAL(ensoleillé)' }] }),
    );
    // Cut inside the two bytes of "é" in "météo".
    const bytes = Buffer.from(`${TEXT}\n`, 'utf8');
    const cut = bytes.indexOf(Buffer.from('é', 'utf8')) + 1;
    let stdout = '';
    const io: CliIO = {
      stdout: { write: (s: string) => (stdout += s), isTTY: false },
      stderr: { write: () => true, isTTY: false },
      stdin: Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]),
      env: { PATH: process.env.PATH, RLM_MODEL: `scripted:${rules}` },
      cwd: root,
    };
    expect(await main(['answer', '-', '--context', rules], io)).toBe(0);
    expect(stdout).toBe('ensoleillé\n');
  });
});
