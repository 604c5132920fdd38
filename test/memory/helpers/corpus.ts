/** Small generated corpora for store tests: deterministic, written to a folder the test gives. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const WORDS =
  'river stone garden window bridge lantern copper meadow harbor violin thunder pepper marble falcon orchard canyon velvet ember glacier compass'.split(
    ' ',
  );

/** Seeded pseudo-random prose: `n` paragraphs of sentences from a small vocabulary. */
export function prose(seed: number, paragraphs: number): string {
  let x = seed >>> 0 || 1;
  const rnd = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const sentences: string[] = [];
    for (let s = 0; s < 4; s++) {
      const words = Array.from(
        { length: 8 + Math.floor(rnd() * 8) },
        () => WORDS[Math.floor(rnd() * WORDS.length)]!,
      );
      sentences.push(`${words.join(' ')}.`);
    }
    out.push(sentences.join(' '));
  }
  return `${out.join('\n\n')}\n`;
}

/** A folder with a few kinds of files, including one binary file. Returns its path. */
export function writeSampleCorpus(root: string): string {
  const dir = path.join(root, 'corpus');
  mkdirSync(path.join(dir, 'notes'), { recursive: true });
  writeFileSync(
    path.join(dir, 'guide.md'),
    '# Setup\n\nInstall the zephyrine toolkit before anything else. It needs a working compiler.\n\n## Configuration\n\nWe decided to use PostgreSQL for storage because the team knows it well.\n\n# Usage\n\nRun the quarkbeam command to start the service.\n',
  );
  writeFileSync(path.join(dir, 'notes', 'story.txt'), prose(7, 30));
  writeFileSync(
    path.join(dir, 'notes', 'chat.jsonl'),
    [
      {
        type: 'user',
        message: { role: 'user', content: 'How do I rotate the flimflam keys?' },
        timestamp: '2026-01-02T10:00:00Z',
        sessionId: 's1',
      },
      {
        type: 'assistant',
        message: {
          role: 'assistant',
          content: [{ type: 'text', text: 'Run rotate-keys with the --flimflam flag.' }],
        },
        timestamp: '2026-01-02T10:00:05Z',
        sessionId: 's1',
      },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n'),
  );
  writeFileSync(
    path.join(dir, 'code.ts'),
    'export function add(a: number, b: number): number {\n  return a + b;\n}\n',
  );
  writeFileSync(
    path.join(dir, 'image.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0]),
  );
  return dir;
}

/**
 * `length` characters of seeded random letters and digits in words of seven: text in which a few
 * characters taken anywhere rarely occur twice, so a test can tell where a match comes from.
 */
export function noise(seed: number, length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let s = seed;
  return Array.from({ length }, (_, i) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return i % 8 === 7 ? ' ' : alphabet[Math.floor(s / 65536) % alphabet.length];
  }).join('');
}
