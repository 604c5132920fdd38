import { describe, expect, it } from 'vitest';
import { Analyzer, analyze, detectLanguage, MAX_TOKEN_LENGTH } from '../../../memory/search/analyzer.ts';
import { foldDiacritics } from '../../../memory/search/fold.ts';

describe('tokenizing', () => {
  const a = new Analyzer();

  it('splits on anything but letters, digits and marks, and lowercases', () => {
    expect(a.tokenize('Hello, WORLD! foo_bar 3.14 x-ray')).toEqual([
      'hello',
      'world',
      'foo',
      'bar',
      '3',
      '14',
      'x',
      'ray',
    ]);
  });

  it('keeps letters of any script and splits ideographs one per token', () => {
    expect(a.tokenize('Ελληνικά кириллица 東京タワー')).toEqual([
      'ελληνικά',
      'кириллица',
      '東',
      '京',
      'タ',
      'ワ',
      'ー',
    ]);
  });

  it('keeps astral-plane letters inside words and drops emoji', () => {
    expect(a.tokenize('a𝒳b 😀 c')).toEqual(['a𝒳b', 'c']);
  });

  it('drops tokens longer than the limit', () => {
    const long = 'x'.repeat(MAX_TOKEN_LENGTH + 1);
    const max = 'y'.repeat(MAX_TOKEN_LENGTH);
    expect(a.tokenize(`ok ${long} ${max}`)).toEqual(['ok', max]);
  });

  it('gives the same tokens with a tiny memo that is cleared all the time', () => {
    const text = 'the quick brown fox jumps over the lazy dog again and again, quickly';
    expect(new Analyzer({ cacheSize: 4 }).analyze(text)).toEqual(new Analyzer().analyze(text));
  });
});

describe('analyze', () => {
  it('removes English stop words and stems the rest', () => {
    expect(analyze('The connections of the running systems')).toEqual(['connect', 'run', 'system']);
  });

  it('removes French stop words and stems with the French stemmer', () => {
    expect(analyze('Les chevaux de la ferme et les maisons du village')).toEqual([
      'cheval',
      'ferm',
      'maison',
      'villag',
    ]);
  });

  it('keeps numbers as typed', () => {
    expect(analyze('error 404 in 2024 build v8')).toEqual(['error', '404', '2024', 'build', 'v8']);
  });

  it('folds diacritics after stemming so accented and plain spellings meet', () => {
    expect(analyze('décidé', 'fr')).toEqual(['decid']);
    expect(analyze('decide', 'en')).toEqual(['decid']);
    expect(analyze('DÉCIDÉ', 'fr')).toEqual(analyze('decide', 'fr'));
  });

  it('analyses decomposed (NFD) text like composed text', () => {
    expect(analyze('de\u0301cide\u0301', 'fr')).toEqual(analyze('décidé', 'fr'));
  });

  it('uses the language it is given', () => {
    expect(analyze('chevaux', 'fr')).toEqual(['cheval']);
    expect(analyze('chevaux', 'en')).toEqual(['chevaux']);
  });
});

describe('detectLanguage', () => {
  it('detects French and English by their stop words', () => {
    expect(detectLanguage("Le chat est sur la table et il dort depuis qu'il a mangé.")).toBe('fr');
    expect(detectLanguage('The cat is on the table and it has been sleeping since it ate.')).toBe('en');
  });

  it('defaults to English without evidence', () => {
    expect(detectLanguage('')).toBe('en');
    expect(detectLanguage('kubernetes postgres')).toBe('en');
  });
});

describe('queryGroups', () => {
  const a = new Analyzer();

  it('gives each word its English and French terms, once when they agree', () => {
    expect(a.queryGroups('chevaux rapides')).toEqual([['chevaux', 'cheval'], ['rapid']]);
  });

  it('drops stop words of the query language only', () => {
    // English query: "son" is a French stop word but an English noun.
    expect(a.queryGroups('the son of the king')).toEqual([['son'], ['king']]);
    expect(a.queryGroups('le fils du roi')).toEqual([['fil'], ['roi']]);
  });
});

describe('foldDiacritics', () => {
  it('removes accents and spells out ligatures', () => {
    expect(foldDiacritics('élève cœur straße øre')).toBe('eleve coeur strasse ore');
    expect(foldDiacritics('plain')).toBe('plain');
  });
});

describe('identifiers', () => {
  const a = new Analyzer();

  it('indexes a camelCase identifier whole and as its parts', () => {
    expect(a.tokenize('call refreshToken now')).toEqual(['call', 'refreshtoken', 'refresh', 'token', 'now']);
    expect(a.tokenize('new XMLHttpRequest()')).toEqual(['new', 'xmlhttprequest', 'xml', 'http', 'request']);
    expect(a.tokenize('utf8Decode')).toEqual(['utf8decode', 'utf8', 'decode']);
    // Capitalised words and all-caps words are one token, as before.
    expect(a.tokenize('Token HTTP Paris')).toEqual(['token', 'http', 'paris']);
  });

  it('lets a prose query meet camelCase and snake_case code', () => {
    expect(analyze('refresh tokens')).toEqual(['refresh', 'token']);
    expect(analyze('const refreshToken = 1')).toEqual(expect.arrayContaining(['refresh', 'token']));
    expect(analyze('refresh_token = 1')).toEqual(expect.arrayContaining(['refresh', 'token']));
  });

  it('gives the same terms whether the identifier was memoised lowercase first or not', () => {
    const b = new Analyzer({ cacheSize: 16 });
    expect(b.tokenize('refreshtoken refreshToken')).toEqual([
      'refreshtoken',
      'refreshtoken',
      'refresh',
      'token',
    ]);
  });

  it('splits every spelling of a repeated identifier as it would alone, memo cleared or not', () => {
    const spellings = [
      'refreshToken',
      'RefreshToken',
      'refreshTOKEN',
      'refreshtoken',
      'refreshToken',
      'reFreshToken',
    ];
    const text = [...spellings, ...spellings].join(' ');
    const alone = [...spellings, ...spellings].flatMap((w) => new Analyzer().tokenize(w));
    expect(new Analyzer().tokenize(text)).toEqual(alone);
    expect(new Analyzer({ cacheSize: 16 }).tokenize(text)).toEqual(alone);
    const long = Array.from({ length: 40 }, (_, i) => `${spellings[i % spellings.length]} word${i}`).join(
      ' ',
    );
    expect(new Analyzer({ cacheSize: 16 }).analyze(long)).toEqual(new Analyzer().analyze(long));
  });
});
