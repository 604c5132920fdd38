/**
 * Text → index terms. Tokens are runs of Unicode letters, digits and combining marks, lowercased;
 * Chinese/Japanese ideographs and kana count one character per token, since those scripts do not
 * separate words with spaces. Tokens longer than {@link MAX_TOKEN_LENGTH} are dropped. Stop words of
 * the text's language are dropped, the rest are stemmed (Porter2 for English, Snowball French for
 * French) and the stems folded to plain letters. Tokens with digits are kept as typed. An identifier
 * with inner capitals (`refreshToken`, `XMLHttpRequest`) also yields its parts (`refresh`, `token`), so
 * prose queries find code; `snake_case` needs nothing, since `_` separates tokens anyway.
 *
 * Indexing speed rests on two memos. Every distinct token is analysed once: the scanner hashes each
 * token while reading it and finds it in an open-addressing table by comparing characters in place,
 * so a known token costs no allocation at all. And every distinct term is one interned {@link Term}
 * object, which lets the segment builder keep per-term state without a second hash lookup.
 */
import { FNV_OFFSET, FNV_PRIME, fnv1a } from '../fnv.ts';
import { ownString } from '../own-string.ts';
import { charClass, SEP, SINGLE, WORD, WORD_ASCII } from './charclass.ts';
import { foldDiacritics } from './fold.ts';
import { stemEnglish } from './stem-en.ts';
import { stemFrench } from './stem-fr.ts';
import { ENGLISH_STOP_WORDS } from './stopwords-en.ts';
import { FRENCH_STOP_WORDS } from './stopwords-fr.ts';

/** Languages with a stemmer and a stop word list. */
export type Language = 'en' | 'fr';

/** Longest token kept, in UTF-16 units; longer runs are hashes, base64 or junk, not words. */
export const MAX_TOKEN_LENGTH = 40;

/**
 * Version of the analysis rules, written into every BM25 segment (`analyzer` in SCHEMA.md). 2 added
 * the parts of camelCase identifiers. Older segments still search (scores are sums over query terms,
 * so a missing part term only costs recall); `rlm repair` re-indexes them with these rules.
 */
export const ANALYZER_VERSION = 2;

/** Parts of a camelCase identifier: a capitalised or lowercase run, an acronym, with trailing digits. */
const CAMEL_PART_RE = /\p{Lu}+(?!\p{Ll})[\p{N}\p{M}]*|\p{Lu}?[\p{Ll}\p{M}]+[\p{N}]*|[\p{N}]+/gu;

/**
 * An interned index term. `mark` and `slot` are scratch space owned by the segment builder (which
 * term slot a build gave it); nothing else reads them.
 */
export interface Term {
  readonly text: string;
  mark: number;
  slot: number;
}

const STOP_EN = 1;
const STOP_FR = 2;
const DIGIT_RE = /\p{N}/u;
const MARK_RE = /\p{M}/u;
/** Signed, as the hashes the loops below make are. */
const OFFSET = FNV_OFFSET | 0;

/** What the analyzer knows about one distinct token; `en`/`fr` are its terms (null = dropped), filled lazily. */
interface TokenInfo {
  readonly key: string;
  readonly hash: number;
  readonly stop: number;
  en: Term | null | undefined;
  fr: Term | null | undefined;
  /** The last cased spelling seen of a camelCase token, and its parts (null: not split), so a repeated identifier is split once. */
  cased: string | undefined;
  parts: TokenInfo[] | null | undefined;
}

export interface AnalyzerOptions {
  /**
   * Distinct tokens memoised before the memo is cleared (default 50k, about 10 MB). Twice that held 10 MB
   * more through an ingest for 10% fewer analyses (a 40 MB ingest: 225k against 250k). 20k lowered a 1 GB
   * ingest's peak by about 10 MB (the memo fills as new words come, so a long ingest meets it full) but
   * cost 10-14% more CPU time on the 335 MB and 1 GB ingests of `npm run bench -- scale`.
   */
  cacheSize?: number;
}

/** Tokenizer, stop words and stemmers with memos of analysed tokens and interned terms. */
export class Analyzer {
  private readonly cacheSize: number;
  private entries: TokenInfo[] = [];
  private table = new Int32Array(1 << 12);
  private terms = new Map<string, Term>();
  /** Tokens of the last scan, and the language vote (> 0: French). */
  private infos: TokenInfo[] = [];
  private vote = 0;
  /** Output of {@link analyzeTerms}: valid up to the count it returned, until the next call. */
  readonly termBuffer: Term[] = [];

  constructor(opts: AnalyzerOptions = {}) {
    this.cacheSize = Math.max(16, opts.cacheSize ?? 50_000);
  }

  /** Lowercase tokens of `text`, before stop words and stemming. */
  tokenize(text: string): string[] {
    const count = this.scan(text);
    return this.infos.slice(0, count).map((info) => info.key);
  }

  /** The language whose stop words are more frequent in `text` (English on a tie). */
  detectLanguage(text: string): Language {
    this.scan(text);
    return this.vote > 0 ? 'fr' : 'en';
  }

  /** Index terms of `text`, in order and with repeats; the language is detected unless given. */
  analyze(text: string, lang?: Language): string[] {
    const count = this.analyzeTerms(text, lang);
    const out: string[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = this.termBuffer[i]!.text;
    return out;
  }

  /** Like {@link analyze} but fills {@link termBuffer} with interned terms and returns their count. */
  analyzeTerms(text: string, lang?: Language): number {
    const count = this.scan(text);
    const language = lang ?? (this.vote > 0 ? 'fr' : 'en');
    const infos = this.infos;
    const out = this.termBuffer;
    let m = 0;
    for (let i = 0; i < count; i++) {
      const info = infos[i]!;
      let term = language === 'fr' ? info.fr : info.en;
      if (term === undefined) term = this.fill(info, language);
      if (term !== null) out[m++] = term;
    }
    return m;
  }

  /**
   * Query terms grouped per query word: each group holds the word's English and French terms (one
   * when they agree). A word that is a stop word in the query's language is dropped, and a stemmer's
   * term is left out when the word is a stop word in that stemmer's language.
   */
  queryGroups(text: string): string[][] {
    const count = this.scan(text);
    const dropped = this.vote > 0 ? STOP_FR : STOP_EN;
    const infos = this.infos.slice(0, count);
    const groups: string[][] = [];
    for (const info of infos) {
      if (info.stop & dropped) continue;
      const en = info.en === undefined ? this.fill(info, 'en') : info.en;
      const fr = info.fr === undefined ? this.fill(info, 'fr') : info.fr;
      const group: string[] = [];
      if (en) group.push(en.text);
      if (fr && fr.text !== en?.text) group.push(fr.text);
      if (group.length > 0) groups.push(group);
    }
    return groups;
  }

  /** Tokenizes `text` into {@link infos} and votes on its language; returns the token count. */
  private scan(text: string): number {
    const s = text.toLowerCase();
    const n = s.length;
    const infos = this.infos;
    // Inner capitals are looked for in the original text, which lines up with `s` unless lowercasing
    // changed a length (a rare few letters, like dotted İ): then identifiers are not split.
    const cased = text.length === n ? text : s;
    let inner = false;
    let count = 0;
    let vote = 0;
    let i = 0;
    while (i < n) {
      const c = s.charCodeAt(i);
      let cls: number;
      if (c < 128) {
        if (!WORD_ASCII[c]) {
          i++;
          continue;
        }
        cls = WORD;
      } else {
        cls = charClass(s, i);
      }
      const width = cls >> 3;
      if ((cls & 7) === SEP) {
        i += width;
        continue;
      }
      const start = i;
      inner = false;
      let h = OFFSET;
      if ((cls & 7) === SINGLE) {
        for (let j = 0; j < width; j++) h = Math.imul(h ^ s.charCodeAt(i + j), FNV_PRIME);
        i += width;
      } else {
        while (i < n) {
          const d = s.charCodeAt(i);
          if (d < 128) {
            if (!WORD_ASCII[d]) break;
            h = Math.imul(h ^ d, FNV_PRIME);
            if (d !== cased.charCodeAt(i) && i > start) inner = true;
            i++;
            continue;
          }
          const k = charClass(s, i);
          if ((k & 7) !== WORD) break;
          h = Math.imul(h ^ d, FNV_PRIME);
          if (k >> 3 === 2) h = Math.imul(h ^ s.charCodeAt(i + 1), FNV_PRIME);
          i += k >> 3;
        }
        if (i - start > MAX_TOKEN_LENGTH) continue;
      }
      const info = this.lookup(s, start, i, h);
      if (info.stop === STOP_EN) vote--;
      else if (info.stop === STOP_FR) vote++;
      infos[count++] = info;
      if (inner) count = this.addParts(info, cased, start, i, count);
    }
    this.vote = vote;
    return count;
  }

  /**
   * Appends the parts of the camelCase identifier `cased[start, end)` (whose token is `info`) after the
   * identifier itself; returns the new count. The parts are memoised on `info` for its last spelling:
   * identifiers repeat like words do, and splitting each occurrence with a regex was a fifth of an
   * ingest's allocations. Memoised parts never outlive their memo generation: a {@link clear} drops
   * `info` from the table along with them.
   */
  private addParts(info: TokenInfo, cased: string, start: number, end: number, count: number): number {
    let parts = info.parts;
    if (
      parts === undefined ||
      info.cased === undefined ||
      info.cased.length !== end - start ||
      !sameChars(info.cased, cased, start)
    ) {
      const identifier = ownString(cased.slice(start, end));
      parts = this.splitIdentifier(identifier);
      info.cased = identifier;
      info.parts = parts;
    }
    if (parts === null) return count;
    for (const part of parts) this.infos[count++] = part;
    return count;
  }

  /** The tokens of the parts of a camelCase identifier, or null when it has fewer than two. */
  private splitIdentifier(identifier: string): TokenInfo[] | null {
    const parts = identifier.match(CAMEL_PART_RE);
    if (parts === null || parts.length < 2) return null;
    return parts.map((part) => {
      const lower = part.toLowerCase();
      return this.lookup(lower, 0, lower.length, fnv1a(lower) | 0);
    });
  }

  /** The memo entry of `s.slice(start, end)` (hash `h`), created on first sight. */
  private lookup(s: string, start: number, end: number, h: number): TokenInfo {
    const len = end - start;
    let mask = this.table.length - 1;
    let slot = h & mask;
    for (;;) {
      const e = this.table[slot]!;
      if (e === 0) break;
      const info = this.entries[e - 1]!;
      if (info.hash === h && info.key.length === len && sameChars(info.key, s, start)) return info;
      slot = (slot + 1) & mask;
    }
    if (this.entries.length >= this.cacheSize) {
      this.clear();
      mask = this.table.length - 1;
      slot = h & mask;
    }
    const key = ownString(s.slice(start, end));
    const stop = (ENGLISH_STOP_WORDS.has(key) ? STOP_EN : 0) | (FRENCH_STOP_WORDS.has(key) ? STOP_FR : 0);
    const info: TokenInfo = {
      key,
      hash: h,
      stop,
      en: undefined,
      fr: undefined,
      cased: undefined,
      parts: undefined,
    };
    this.entries.push(info);
    this.table[slot] = this.entries.length;
    if (this.entries.length * 2 > this.table.length) this.grow();
    return info;
  }

  private grow(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    this.entries.forEach((info, i) => {
      let slot = info.hash & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = i + 1;
    });
    this.table = table;
  }

  private clear(): void {
    this.entries = [];
    this.table = new Int32Array(1 << 12);
    this.terms = new Map();
  }

  private fill(info: TokenInfo, lang: Language): Term | null {
    const text = termText(info.key, info.stop, lang);
    let term: Term | null = null;
    if (text !== '') {
      term = this.terms.get(text) ?? null;
      if (term === null) {
        term = { text, mark: 0, slot: 0 };
        this.terms.set(text, term);
      }
    }
    if (lang === 'fr') info.fr = term;
    else info.en = term;
    return term;
  }
}

function sameChars(key: string, s: string, start: number): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) !== s.charCodeAt(start + i)) return false;
  return true;
}

/** The index term of one lowercase token in `lang`, or '' when the token is not indexed. */
function termText(token: string, stop: number, lang: Language): string {
  if (stop & (lang === 'fr' ? STOP_FR : STOP_EN)) return '';
  if (DIGIT_RE.test(token)) return token;
  const word = MARK_RE.test(token) ? token.normalize('NFC') : token;
  return foldDiacritics(lang === 'fr' ? stemFrench(word) : stemEnglish(word));
}

const shared = new Analyzer();

/** The process-wide analyzer behind {@link analyze} and {@link detectLanguage}. */
export function defaultAnalyzer(): Analyzer {
  return shared;
}

/** Index terms of `text` (see {@link Analyzer.analyze}). */
export function analyze(text: string, lang?: Language): string[] {
  return shared.analyze(text, lang);
}

/** 'fr' when French stop words outnumber English ones in `text`, else 'en'. */
export function detectLanguage(text: string): Language {
  return shared.detectLanguage(text);
}
