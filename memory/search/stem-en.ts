/**
 * English stemmer: the Snowball "english" (Porter2) algorithm, written from its published description
 * (snowballstem.org), including the later refinements to the R1 prefix list, -ing/-eed handling and
 * `-ogist`. Input is one lowercase word; the output is its stem.
 *
 * The code mirrors the algorithm's steps one function each and uses string slices for clarity; the
 * analyzer memoises stems, so each distinct word is stemmed once per process.
 *
 * Differences from Snowball: none in the stemmer. It gives the reference stem for all 42,649 words of
 * Snowball's English vocabulary list (snowball-data `ba91f32`, 2026; test/memory/search/stem-snowball.test.ts).
 * What differs is around it, in the analyzer: text is cut into words at anything but letters, digits and
 * marks, so apostrophes never reach the stemmer (`dog's` is `dog` + `s`) and the possessive rules only
 * matter for direct callers; words with digits are kept as typed; stems are folded to plain letters.
 */
import { longestSuffix, suffixTable, words } from './suffix.ts';

/** Whole words with a fixed stem (irregular forms and words that must not be stemmed). */
const EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ['skis', 'ski'],
  ['skies', 'sky'],
  ['idly', 'idl'],
  ['gently', 'gentl'],
  ['ugly', 'ugli'],
  ['early', 'earli'],
  ['only', 'onli'],
  ['singly', 'singl'],
  ['sky', 'sky'],
  ['news', 'news'],
  ['howe', 'howe'],
  ['atlas', 'atlas'],
  ['cosmos', 'cosmos'],
  ['bias', 'bias'],
  ['andes', 'andes'],
]);

/** Word starts after which R1 begins, overriding the usual rule (keeps generate/general apart etc.). */
const R1_PREFIXES = ['gener', 'commun', 'arsen', 'past', 'univers', 'later', 'emerg', 'organ', 'inter'];

/** Words left alone by step 1b when they end in -ing (inning, outing...): the part before "ing". */
const ING_KEEP: ReadonlySet<string> = new Set(['inn', 'out', 'cann', 'herr', 'earr', 'even']);
const EED_KEEP: ReadonlySet<string> = new Set(['proc', 'exc', 'succ']);
const DOUBLES: ReadonlySet<string> = new Set(['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt']);
const STEP1B = suffixTable(['eed', 'eedly', 'ed', 'edly', 'ing', 'ingly']);

const STEP2_MAP: ReadonlyMap<string, string> = new Map([
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['abli', 'able'],
  ['entli', 'ent'],
  ['izer', 'ize'],
  ['ization', 'ize'],
  ['ational', 'ate'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['aliti', 'al'],
  ['alli', 'al'],
  ['fulness', 'ful'],
  ['ousli', 'ous'],
  ['ousness', 'ous'],
  ['iveness', 'ive'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['bli', 'ble'],
  ['ogist', 'og'],
  ['ogi', 'og'],
  ['fulli', 'ful'],
  ['lessli', 'less'],
  ['li', ''],
]);
const STEP2 = suffixTable([...STEP2_MAP.keys()]);

const STEP3_MAP: ReadonlyMap<string, string> = new Map([
  ['tional', 'tion'],
  ['ational', 'ate'],
  ['alize', 'al'],
  ['icate', 'ic'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
  ['ative', ''],
]);
const STEP3 = suffixTable([...STEP3_MAP.keys()]);

const STEP4 = suffixTable(
  words('al ance ence er ic able ible ant ement ment ent ism ate iti ous ive ize ion'),
);

/** Letters that may precede a deletable "li". */
const VALID_LI = 'cdeghkmnrt';

/** True when `w[i]` exists and is a vowel (a e i o u y; the marker `Y` is a consonant). */
function isV(w: string, i: number): boolean {
  const c = w.charCodeAt(i);
  return c === 97 || c === 101 || c === 105 || c === 111 || c === 117 || c === 121;
}

/** True when `w[i]` exists and is not a vowel. */
function isNonV(w: string, i: number): boolean {
  return i >= 0 && i < w.length && !isV(w, i);
}

function hasVowel(w: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (isV(w, i)) return true;
  return false;
}

/** Position just after the first non-vowel that follows a vowel, searching from `from`; else the end. */
function afterVowelConsonant(w: string, from: number): number {
  const n = w.length;
  let i = from;
  while (i < n && !isV(w, i)) i++;
  while (i < n && isV(w, i)) i++;
  return i >= n ? n : i + 1;
}

/** Whether the part of `w` before `end` ends in a short syllable. */
function shortV(w: string, end: number): boolean {
  if (end >= 3) {
    const c = w[end - 1]!;
    if (!isV(w, end - 1) && c !== 'w' && c !== 'x' && c !== 'Y' && isV(w, end - 2) && isNonV(w, end - 3))
      return true;
  } else if (end === 2 && isNonV(w, 1) && isV(w, 0)) {
    return true;
  }
  // "past" behaves as short so that pasted/pasting meet paste.
  return end >= 4 && w.slice(end - 4, end) === 'past';
}

function markY(w: string): string {
  if (!w.includes('y')) return w;
  const chars = w.split('');
  if (chars[0] === 'y') chars[0] = 'Y';
  for (let i = 1; i < chars.length; i++) {
    if (chars[i] === 'y' && isV(chars[i - 1]!, 0)) chars[i] = 'Y';
  }
  return chars.join('');
}

function step1a(w: string): string {
  if (w.endsWith("'s'")) w = w.slice(0, -3);
  else if (w.endsWith("'s")) w = w.slice(0, -2);
  else if (w.endsWith("'")) w = w.slice(0, -1);
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ied') || w.endsWith('ies')) {
    const bra = w.length - 3;
    return w.slice(0, bra) + (bra >= 2 ? 'i' : 'ie');
  }
  if (w.endsWith('us') || w.endsWith('ss')) return w;
  if (w.endsWith('s')) {
    const bra = w.length - 1;
    // The letter right before the s does not count: "gas" and "this" keep their s.
    if (bra >= 1 && hasVowel(w, 0, bra - 1)) return w.slice(0, bra);
  }
  return w;
}

function step1b(w: string, p1: number): string {
  const suffix = longestSuffix(w, STEP1B);
  if (suffix === '') return w;
  const bra = w.length - suffix.length;
  const before = w.slice(0, bra);
  if (suffix === 'eed' || suffix === 'eedly') {
    return bra >= p1 && !EED_KEEP.has(before) ? before + 'ee' : w;
  }
  if (suffix === 'ing') {
    // dying → die, lying → lie: a consonant and y are all there is before -ing.
    if (before.endsWith('y')) {
      if (bra === 2 && isNonV(w, 0)) return w[0] + 'ie';
    } else if (ING_KEEP.has(before)) {
      return w;
    }
  }
  if (!hasVowel(w, 0, bra)) return w;
  const m = before.length;
  const tail = before.slice(-2);
  if (tail === 'at' || tail === 'bl' || tail === 'iz') return before + 'e';
  if (DOUBLES.has(tail)) {
    // "added", "egged", "odder": a single a/e/o before the double keeps it.
    if (m === 3 && 'aeo'.includes(before[0]!)) return before;
    return before.slice(0, -1);
  }
  if (p1 === m && shortV(before, m)) return before + 'e';
  return before;
}

function step1c(w: string): string {
  const n = w.length;
  const last = w[n - 1];
  if ((last === 'y' || last === 'Y') && n >= 3 && isNonV(w, n - 2)) return w.slice(0, -1) + 'i';
  return w;
}

function step2(w: string, p1: number): string {
  const suffix = longestSuffix(w, STEP2);
  const bra = w.length - suffix.length;
  if (suffix === '' || bra < p1) return w;
  if (suffix === 'ogi' && w[bra - 1] !== 'l') return w;
  if (suffix === 'li' && (bra < 1 || !VALID_LI.includes(w[bra - 1]!))) return w;
  return w.slice(0, bra) + STEP2_MAP.get(suffix)!;
}

function step3(w: string, p1: number, p2: number): string {
  const suffix = longestSuffix(w, STEP3);
  const bra = w.length - suffix.length;
  if (suffix === '' || bra < p1) return w;
  if (suffix === 'ative' && bra < p2) return w;
  return w.slice(0, bra) + STEP3_MAP.get(suffix)!;
}

function step4(w: string, p2: number): string {
  const suffix = longestSuffix(w, STEP4);
  const bra = w.length - suffix.length;
  if (suffix === '' || bra < p2) return w;
  if (suffix === 'ion' && w[bra - 1] !== 's' && w[bra - 1] !== 't') return w;
  return w.slice(0, bra);
}

function step5(w: string, p1: number, p2: number): string {
  const bra = w.length - 1;
  const last = w[bra];
  if (last === 'e') {
    if (bra >= p2 || (bra >= p1 && !shortV(w, bra))) return w.slice(0, bra);
  } else if (last === 'l') {
    if (bra >= p2 && w[bra - 1] === 'l') return w.slice(0, bra);
  }
  return w;
}

/** Porter2 stem of one lowercase English word (words shorter than 3 letters are returned as is). */
export function stemEnglish(word: string): string {
  const exception = EXCEPTIONS.get(word);
  if (exception !== undefined) return exception;
  if (word.length < 3) return word;
  let w = word.charCodeAt(0) === 39 ? word.slice(1) : word;
  w = markY(w);
  let p1 = -1;
  for (const prefix of R1_PREFIXES) {
    if (w.startsWith(prefix)) {
      p1 = prefix.length;
      break;
    }
  }
  if (p1 < 0) p1 = afterVowelConsonant(w, 0);
  const p2 = afterVowelConsonant(w, p1);

  w = step1a(w);
  w = step1b(w, p1);
  w = step1c(w);
  w = step2(w, p1);
  w = step3(w, p1, p2);
  w = step4(w, p2);
  w = step5(w, p1, p2);
  return w.includes('Y') ? w.replaceAll('Y', 'y') : w;
}
