import { get_encoding } from 'tiktoken';
import { afterAll, describe, expect, it } from 'vitest';
import {
  clearTokenCache,
  countTokens,
  MAX_PIECE_CHARS,
  PIECE_PATTERN,
  pieceEnd,
  rangeTokens,
  TOKENIZER,
  TokenScanner,
  tokenBoundaries,
} from '../../../memory/ingest/tokens.ts';

const enc = get_encoding('cl100k_base');
afterAll(() => enc.free());

const reference = (text: string) => enc.encode_ordinary(text).length;

/** Small deterministic PRNG for the fuzz cases. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fragments chosen to hit every alternative of the split regex and its edges. */
const ALPHABET = [
  'a',
  'b',
  'Z',
  'é',
  'ß',
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\r',
  '\t',
  '.',
  ',',
  '!',
  '?',
  "'",
  's',
  'S',
  'll',
  'LL',
  're',
  've',
  't',
  'd',
  'm',
  'ſ',
  '1',
  '23',
  '٣',
  '😀',
  '𝐀',
  '𝟏',
  '-',
  '\u00a0',
  '\u0085',
  '\ufeff',
  '中',
  '"',
  '{',
  '}',
  '\u0301',
  '\ud800',
  '\udc00',
  '\u2028',
  '\u3000',
  'ॐ',
  '…',
  '«',
];

function randomText(rnd: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
  return s;
}

const NATURAL: Record<string, string> = {
  english:
    "It's a truth universally acknowledged, that a single man in possession of a good fortune must be in want of a wife. We'll see; they've been there, I'm sure you'd agree!",
  french:
    "L'été dernier, nous avons décidé d'aller à Montréal. Où êtes-vous ? Ça va très bien, merci. Les élèves ont réussi l'examen — enfin !",
  code: 'export function add(a: number, b: number): number {\n  return a + b; // sum\n}\n\n\nconst xs = [1, 2, 3].map((x) => x * 2);\n',
  json: '{"id": 42, "name": "Ada", "tags": ["x", "y"], "nested": {"ok": true, "n": null, "s": "a\\nb"}}\n',
  emoji: 'Ship it 🚀🚀 — thumbs 👍🏽, family 👨‍👩‍👧, flag 🇫🇷, and ☕️ for everyone.',
  crlf: 'first line\r\nsecond line\r\n\r\n   indented\r\n\ttabbed\r\n',
  numbers: 'Call 555-0199 at 10:30; pay $1,234,567.89 (3.14159%) by 2024-01-15T10:00:00Z, id 0xFF.',
  whitespace: '  lead\n\n\n   \n  trail   \n\t\t\n x  y   z    ',
  cjk: '中文文本，测试一下。日本語のテキストです。한국어 텍스트입니다.',
  mixed: 'Ünïcödé «quotes» and ‘single’ “double” — dashes – and … ellipsis; math 𝐀𝐁𝐂 𝟏𝟐𝟑 and ٣٤٥.',
};

describe('countTokens', () => {
  it('names the tokenizer', () => {
    expect(TOKENIZER).toBe('cl100k_base');
  });

  it.each(Object.entries(NATURAL))('matches tiktoken on %s text', (_name, text) => {
    expect(countTokens(text)).toBe(reference(text));
  });

  it('matches tiktoken on a long mixed document', () => {
    const doc = Object.values(NATURAL).join('\n\n').repeat(40);
    expect(countTokens(doc)).toBe(reference(doc));
  });

  it('matches tiktoken on random fragments built to stress the split regex', () => {
    const rnd = prng(7);
    for (let i = 0; i < 1500; i++) {
      const text = randomText(rnd, Math.floor(rnd() * 40));
      expect(countTokens(text), JSON.stringify(text)).toBe(reference(text));
    }
  });

  it('counts the empty string as zero', () => {
    expect(countTokens('')).toBe(0);
  });

  it('is exact for a piece just under the slicing limit', () => {
    const text = `word ${'x'.repeat(MAX_PIECE_CHARS - 1)} end`;
    expect(countTokens(text)).toBe(reference(text));
  });

  it('returns for a 1 MB single-word string, close to the real count', () => {
    const text = 'a'.repeat(1_000_000);
    const n = countTokens(text);
    // tiktoken itself would take tens of seconds here, so compare with a slice's exact count instead.
    const slice = reference('a'.repeat(MAX_PIECE_CHARS));
    expect(n).toBe(slice * (1_000_000 / MAX_PIECE_CHARS));
  });

  it('does not split surrogate pairs when slicing long pieces', () => {
    const text = '😀'.repeat(1000);
    const n = countTokens(text);
    expect(n).toBeGreaterThan(0);
    // Every slice boundary falls between pairs, so each slice counts like whole emoji.
    const scanner = new TokenScanner(text);
    while (scanner.next()) expect(text.charCodeAt(scanner.start) >= 0xdc00).toBe(false);
  });

  it('stays exact through more distinct pieces than its memo holds, twice over', () => {
    // 300,000 distinct words: the memo (2^17 pieces in a table of 2^18 slots) empties itself twice.
    const letters = (n: number) => {
      let word = '';
      for (let i = 0; i < 4 || n > 0; i++, n = Math.floor(n / 26)) word += String.fromCharCode(97 + (n % 26));
      return word;
    };
    const words = Array.from({ length: 300_000 }, (_, i) => letters(i));
    const text = words.join(' ');
    expect(countTokens(text)).toBe(reference(text));
    // Pieces seen before each emptying count again, as do the newest ones still held.
    const again = `${words.slice(0, 2000).join(' ')} ${words.slice(-2000).join(' ')}`;
    expect(countTokens(again)).toBe(reference(again));
  });

  it('gives the same answers after the cache is cleared', () => {
    const text = NATURAL.french!;
    const before = countTokens(text);
    clearTokenCache();
    expect(countTokens(text)).toBe(before);
  });
});

describe('pieceEnd', () => {
  it('splits exactly like the split regex on random text', () => {
    const re = new RegExp(PIECE_PATTERN.source, 'uy');
    const rnd = prng(11);
    for (let i = 0; i < 2000; i++) {
      const text = randomText(rnd, Math.floor(rnd() * 30));
      const ours: number[] = [];
      for (let p = 0; p < text.length; ) {
        p = pieceEnd(text, p, text.length);
        ours.push(p);
      }
      const theirs: number[] = [];
      re.lastIndex = 0;
      while (re.lastIndex < text.length && re.test(text)) theirs.push(re.lastIndex);
      expect(ours, JSON.stringify(text)).toEqual(theirs);
    }
  });

  it('treats the range end as the end of the text', () => {
    // "  x": two spaces before a letter split as " " + " x"; cut before the x, both spaces go together.
    expect(pieceEnd('a  x', 1, 4)).toBe(2);
    expect(pieceEnd('a  x', 1, 3)).toBe(3);
  });
});

describe('rangeTokens and the scanner', () => {
  it('equals countTokens of the slice for arbitrary ranges', () => {
    const doc = Object.values(NATURAL).join('\n\n');
    const rnd = prng(3);
    for (let i = 0; i < 300; i++) {
      const a = Math.floor(rnd() * doc.length);
      const b = a + Math.floor(rnd() * (doc.length - a));
      expect(rangeTokens(doc, a, b), `${a}..${b}`).toBe(countTokens(doc.slice(a, b)));
    }
  });

  it('stops early past a limit', () => {
    const doc = 'word '.repeat(10_000);
    const n = rangeTokens(doc, 0, doc.length, 50);
    expect(n).toBeGreaterThan(50);
    expect(n).toBeLessThan(60);
  });

  it('yields contiguous boundaries whose tokens add up to the count', () => {
    const doc = NATURAL.code! + NATURAL.emoji!;
    let prev = 0;
    let total = 0;
    for (const [end, tokens] of tokenBoundaries(doc)) {
      expect(end).toBeGreaterThan(prev);
      prev = end;
      total += tokens;
    }
    expect(prev).toBe(doc.length);
    expect(total).toBe(countTokens(doc));
  });

  it('restarts cleanly after seek', () => {
    const doc = NATURAL.english!;
    const scanner = new TokenScanner(doc, 0, doc.length);
    scanner.next();
    scanner.next();
    const mid = scanner.end;
    scanner.seek(mid);
    let total = 0;
    while (scanner.next()) total += scanner.tokens;
    expect(total).toBe(countTokens(doc.slice(mid)));
  });
});
