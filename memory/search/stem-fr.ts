/**
 * French stemmer: the Snowball "french" algorithm, written from its published description
 * (snowballstem.org), with the later refinements (-oux, -ais/-aise, the `ni` RV exception, ë/ï kept
 * apart with an H marker). Input is one lowercase word; the output is its stem, accents kept (the
 * analyzer folds them afterwards).
 *
 * Inside the algorithm, upper-case letters are markers: U, I, Y are u, i, y acting as consonants,
 * and H marks a following e or i that carried a diaeresis.
 *
 * Differences from Snowball: none in the stemmer. It gives the reference stem for all 21,655 words of
 * Snowball's French vocabulary list (snowball-data `ba91f32`, 2026; test/memory/search/stem-snowball.test.ts).
 * What differs is around it, in the analyzer: text is cut into words at apostrophes too, so an elided
 * article is its own token (`l'homme` is `l` + `homme`, and `l` is a stop word) rather than handled by the
 * stemmer's elision rule; words with digits are kept as typed; stems are folded to plain letters afterwards.
 */
import { longestSuffix, suffixTable, words } from './suffix.ts';

const VOWELS = 'aeiouyâàëéêèïîôûù';

/** True when `w[i]` exists and is a vowel. */
function isV(w: string, i: number): boolean {
  const c = w[i];
  return c !== undefined && VOWELS.includes(c);
}

/** True when `w[i]` exists and is not a vowel. */
function isNonV(w: string, i: number): boolean {
  const c = w[i];
  return c !== undefined && !VOWELS.includes(c);
}

/** Position just after the first non-vowel that follows a vowel, searching from `from`; else the end. */
function afterVowelConsonant(w: string, from: number): number {
  const n = w.length;
  let i = from;
  while (i < n && !isV(w, i)) i++;
  while (i < n && isV(w, i)) i++;
  return i >= n ? n : i + 1;
}

/** Working state of one word: the text and its regions (start offsets of RV, R1 and R2). */
interface Word {
  w: string;
  rv: number;
  r1: number;
  r2: number;
}

type StandardAction =
  | 'delete'
  | 'ation'
  | 'logie'
  | 'usion'
  | 'ence'
  | 'ement'
  | 'ite'
  | 'if'
  | 'eaux'
  | 'aux'
  | 'oux'
  | 'euse'
  | 'issement'
  | 'amment'
  | 'emment'
  | 'ment';

const STANDARD_MAP = new Map<string, StandardAction>();
function addStandard(action: StandardAction, suffixes: string[]): void {
  for (const s of suffixes) STANDARD_MAP.set(s, action);
}
addStandard('delete', words('ance iqUe isme able iste eux ances iqUes ismes ables istes'));
addStandard('ation', ['atrice', 'ateur', 'ation', 'atrices', 'ateurs', 'ations']);
addStandard('logie', ['logie', 'logies']);
addStandard('usion', ['usion', 'ution', 'usions', 'utions']);
addStandard('ence', ['ence', 'ences']);
addStandard('ement', ['ement', 'ements']);
addStandard('ite', ['ité', 'ités']);
addStandard('if', ['if', 'ive', 'ifs', 'ives']);
addStandard('eaux', ['eaux']);
addStandard('aux', ['aux']);
addStandard('oux', ['oux']);
addStandard('euse', ['euse', 'euses']);
addStandard('issement', ['issement', 'issements']);
addStandard('amment', ['amment']);
addStandard('emment', ['emment']);
addStandard('ment', ['ment', 'ments']);
const STANDARD = suffixTable([...STANDARD_MAP.keys()]);

const EMENT_AFTER = suffixTable(['iv', 'eus', 'abl', 'iqU', 'ièr', 'Ièr']);
const ITE_AFTER = suffixTable(['abil', 'ic', 'iv']);

const I_VERB = suffixTable(
  words(
    'îmes ît îtes i ie ies ir ira irai iraIent irais irait iras irent irez iriez irions irons iront is issaIent issais issait issant issante issantes issants isse issent isses issez issiez issions issons it',
  ),
);

const VERB_DELETE = words(
  'é ée ées és èrent er era erai eraIent erais erait eras erez eriez erions erons eront ez iez eais',
);
const VERB_WITH_E = words(
  'âmes ât âtes a ai aIent ait ant ante antes ants as asse assent asses assiez assions',
);
const VERB_AIS = ['ais', 'aise', 'aises'];
const VERB_DELETE_SET: ReadonlySet<string> = new Set(VERB_DELETE);
const VERB_WITH_E_SET: ReadonlySet<string> = new Set(VERB_WITH_E);
const VERB = suffixTable(['ions', ...VERB_DELETE, ...VERB_WITH_E, ...VERB_AIS]);

const RESIDUAL = suffixTable(['ion', 'ier', 'ière', 'Ier', 'Ière', 'e']);
const KEEP_WITH_S = 'aiouès';
const OUX_ENDING = 'bhjlnp';
const ELISION_CHARS = 'cdjlmnstz';

function elide(w: string): string {
  if (w.length > 2 && w[1] === "'" && ELISION_CHARS.includes(w[0]!)) return w.slice(2);
  if (w.length > 3 && w.startsWith("qu'")) return w.slice(3);
  return w;
}

/** One prelude rewrite at `i`, or null; the caller retries at the same place after a rewrite. */
function preludeAt(s: string, i: number): string | null {
  const c = s[i];
  if (isV(s, i)) {
    const d = s[i + 1];
    if ((d === 'u' || d === 'i') && isV(s, i + 2))
      return s.slice(0, i + 1) + d.toUpperCase() + s.slice(i + 2);
    if (d === 'y') return s.slice(0, i + 1) + 'Y' + s.slice(i + 2);
  }
  if (c === 'ë') return s.slice(0, i) + 'He' + s.slice(i + 1);
  if (c === 'ï') return s.slice(0, i) + 'Hi' + s.slice(i + 1);
  if (c === 'y' && isV(s, i + 1)) return s.slice(0, i) + 'Y' + s.slice(i + 1);
  if (c === 'q' && s[i + 1] === 'u') return s.slice(0, i + 1) + 'U' + s.slice(i + 2);
  return null;
}

function prelude(w: string): string {
  let s = w;
  let i = 0;
  while (i < s.length) {
    const next = preludeAt(s, i);
    if (next === null) i++;
    else s = next;
  }
  return s;
}

function markRegions(w: string): Word {
  const n = w.length;
  let rv = n;
  if (n >= 3 && isV(w, 0) && isV(w, 1)) rv = 3;
  else if (w.startsWith('par') || w.startsWith('col') || w.startsWith('tap')) rv = 3;
  else if (w.startsWith('ni') && isV(w, 2)) rv = 3;
  else {
    for (let i = 1; i < n; i++) {
      if (isV(w, i)) {
        rv = i + 1;
        break;
      }
    }
  }
  const r1 = afterVowelConsonant(w, 0);
  return { w, rv, r1, r2: afterVowelConsonant(w, r1) };
}

/** Replaces the last `length` characters of the word with `by`. */
function replaceEnd(x: Word, length: number, by = ''): void {
  x.w = x.w.slice(0, x.w.length - length) + by;
}

/** Step 1; true when it removed an ending (false also after the -ment rewrites, which go on to step 2). */
function standardSuffix(x: Word): boolean {
  const suffix = longestSuffix(x.w, STANDARD);
  if (suffix === '') return false;
  const bra = x.w.length - suffix.length;
  const { rv, r1, r2 } = x;
  switch (STANDARD_MAP.get(suffix)!) {
    case 'delete':
      if (bra < r2) return false;
      replaceEnd(x, suffix.length);
      return true;
    case 'ation':
      if (bra < r2) return false;
      replaceEnd(x, suffix.length);
      if (x.w.endsWith('ic')) replaceEnd(x, 2, bra - 2 >= r2 ? '' : 'iqU');
      return true;
    case 'logie':
      if (bra < r2) return false;
      replaceEnd(x, suffix.length, 'log');
      return true;
    case 'usion':
      if (bra < r2) return false;
      replaceEnd(x, suffix.length, 'u');
      return true;
    case 'ence':
      if (bra < r2) return false;
      replaceEnd(x, suffix.length, 'ent');
      return true;
    case 'ement':
      if (bra < rv) return false;
      replaceEnd(x, suffix.length);
      ementAfter(x);
      return true;
    case 'ite': {
      if (bra < r2) return false;
      replaceEnd(x, suffix.length);
      const after = longestSuffix(x.w, ITE_AFTER);
      const at = x.w.length - after.length;
      if (after === 'abil') replaceEnd(x, 4, at >= r2 ? '' : 'abl');
      else if (after === 'ic') replaceEnd(x, 2, at >= r2 ? '' : 'iqU');
      else if (after === 'iv' && at >= r2) replaceEnd(x, 2);
      return true;
    }
    case 'if':
      if (bra < r2) return false;
      replaceEnd(x, suffix.length);
      if (x.w.endsWith('at') && x.w.length - 2 >= r2) {
        replaceEnd(x, 2);
        if (x.w.endsWith('ic')) replaceEnd(x, 2, x.w.length - 2 >= r2 ? '' : 'iqU');
      }
      return true;
    case 'eaux':
      replaceEnd(x, 4, 'eau');
      return true;
    case 'aux':
      if (bra < r1) return false;
      replaceEnd(x, 3, 'al');
      return true;
    case 'oux':
      if (bra < 1 || !OUX_ENDING.includes(x.w[bra - 1]!)) return false;
      replaceEnd(x, 3, 'ou');
      return true;
    case 'euse':
      if (bra >= r2) replaceEnd(x, suffix.length);
      else if (bra >= r1) replaceEnd(x, suffix.length, 'eux');
      else return false;
      return true;
    case 'issement':
      if (bra < r1 || !isNonV(x.w, bra - 1)) return false;
      replaceEnd(x, suffix.length);
      return true;
    case 'amment':
      if (bra >= rv) replaceEnd(x, 6, 'ant');
      return false;
    case 'emment':
      if (bra >= rv) replaceEnd(x, 6, 'ent');
      return false;
    case 'ment':
      // Only after a vowel inside RV (confusément), and step 2 still runs.
      if (isV(x.w, bra - 1) && bra - 1 >= rv) replaceEnd(x, suffix.length);
      return false;
  }
}

/** What may precede a removed -ement. */
function ementAfter(x: Word): void {
  const after = longestSuffix(x.w, EMENT_AFTER);
  const at = x.w.length - after.length;
  if (after === 'iv') {
    if (at < x.r2) return;
    replaceEnd(x, 2);
    if (x.w.endsWith('at') && x.w.length - 2 >= x.r2) replaceEnd(x, 2);
  } else if (after === 'eus') {
    if (at >= x.r2) replaceEnd(x, 3);
    else if (at >= x.r1) replaceEnd(x, 3, 'eux');
  } else if (after === 'abl' || after === 'iqU') {
    if (at >= x.r2) replaceEnd(x, 3);
  } else if (after === 'ièr' || after === 'Ièr') {
    if (at >= x.rv) replaceEnd(x, 3, 'i');
  }
}

/** Step 2a: verb endings starting with i, after a consonant, all inside RV. */
function iVerbSuffix(x: Word): boolean {
  const suffix = longestSuffix(x.w, I_VERB, x.rv);
  if (suffix === '') return false;
  const bra = x.w.length - suffix.length;
  if (bra - 1 < x.rv || x.w[bra - 1] === 'H' || !isNonV(x.w, bra - 1)) return false;
  replaceEnd(x, suffix.length);
  return true;
}

/** Step 2b: other verb endings inside RV. */
function verbSuffix(x: Word): boolean {
  const suffix = longestSuffix(x.w, VERB, x.rv);
  if (suffix === '') return false;
  const bra = x.w.length - suffix.length;
  if (suffix === 'ions') {
    if (bra < x.r2) return false;
    replaceEnd(x, 4);
    return true;
  }
  if (VERB_DELETE_SET.has(suffix)) {
    replaceEnd(x, suffix.length);
    return true;
  }
  if (VERB_WITH_E_SET.has(suffix)) {
    const withE = x.w[bra - 1] === 'e' && bra - 1 >= x.rv;
    replaceEnd(x, suffix.length + (withE ? 1 : 0));
    return true;
  }
  // -ais, -aise, -aises, except in balais/palais..., mauvais, déplais.
  const before = x.w.slice(0, bra);
  if (before.endsWith('auv') || before.endsWith('épl')) return false;
  if (before.endsWith('al') && before.length === 3) return false;
  replaceEnd(x, suffix.length);
  return true;
}

/** Step 4, when steps 1-2 removed nothing. */
function residualSuffix(x: Word): void {
  const n = x.w.length;
  if (x.w[n - 1] === 's') {
    const keep = x.w.slice(n - 3, n - 1) !== 'Hi' && (n < 2 || KEEP_WITH_S.includes(x.w[n - 2]!));
    if (!keep) replaceEnd(x, 1);
  }
  const suffix = longestSuffix(x.w, RESIDUAL, x.rv);
  if (suffix === '') return;
  const bra = x.w.length - suffix.length;
  if (suffix === 'ion') {
    const c = x.w[bra - 1];
    if (bra >= x.r2 && bra - 1 >= x.rv && (c === 's' || c === 't')) replaceEnd(x, 3);
  } else if (suffix === 'e') {
    replaceEnd(x, 1);
  } else {
    replaceEnd(x, suffix.length, 'i');
  }
}

function unDouble(x: Word): void {
  const w = x.w;
  if (
    w.endsWith('enn') ||
    w.endsWith('onn') ||
    w.endsWith('ett') ||
    w.endsWith('ell') ||
    w.endsWith('eill')
  ) {
    replaceEnd(x, 1);
  }
}

function unAccent(x: Word): void {
  let i = x.w.length - 1;
  while (i >= 0 && !isV(x.w, i)) i--;
  if (i === x.w.length - 1 || i < 0) return;
  const c = x.w[i];
  if (c === 'é' || c === 'è') x.w = x.w.slice(0, i) + 'e' + x.w.slice(i + 1);
}

function postlude(w: string): string {
  if (!/[IUYH]/.test(w)) return w;
  let out = '';
  for (let i = 0; i < w.length; i++) {
    const c = w[i]!;
    if (c === 'H') {
      const d = w[i + 1];
      if (d === 'e') {
        out += 'ë';
        i++;
      } else if (d === 'i') {
        out += 'ï';
        i++;
      }
    } else if (c === 'I' || c === 'U' || c === 'Y') {
      out += c.toLowerCase();
    } else {
      out += c;
    }
  }
  return out;
}

/** Snowball French stem of one lowercase word. */
export function stemFrench(word: string): string {
  const x = markRegions(prelude(elide(word)));
  const removed = standardSuffix(x) || iVerbSuffix(x) || verbSuffix(x);
  if (removed) {
    if (x.w.endsWith('Y')) replaceEnd(x, 1, 'i');
    else if (x.w.endsWith('ç')) replaceEnd(x, 1, 'c');
  } else {
    residualSuffix(x);
  }
  unDouble(x);
  unAccent(x);
  return postlude(x.w);
}
