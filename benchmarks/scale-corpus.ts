/**
 * A generated stand-in for `/usr/share/doc` at any size, for the store-at-scale benchmark: changelogs,
 * READMEs and copyright files in the proportions of a Debian system, with a vocabulary that keeps growing
 * with the corpus (words are drawn from an unbounded Zipf-ranked space, plus version numbers, hashes,
 * identifiers and names), so dictionaries, typo lookups and the linker see what a real corpus gives them.
 * Seeded: the same size and seed always write the same files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Rng } from './rng.ts';

const COMMON = (
  'the of and to in a is that for it as was with be by on not this are or from at which but have an they ' +
  'you were one all we their been has when who will more no if out so what up its about into than them can ' +
  'only other new some could time these two may then do first any now such like over even most made after ' +
  'also did many before must through back where much your way well down should because each just those how ' +
  'too little state good very make still own see work long get here between both being under never day same ' +
  'another know while last might great old year off come since against go right used take three few use ' +
  'during without again place around however home small found thought say part once high upon every does ' +
  'left number course until always away something though less put think almost enough far yet system better ' +
  'set nothing end why called find going look later point next program give group let side given present ' +
  'several order possible rather second per among form important often things early case become large big ' +
  'need four within along best ever least power development light thing want members mind done turned ' +
  'although open service certain kind problem began different help sense means whole matter perhaps itself ' +
  'name example action company show whether history today either taken past quite anything seen having word ' +
  'half really field already information tell together period held keep sure probably free seems real behind ' +
  'cannot question making brought special heard major problems ago became available known result change ' +
  'close turn true full'
).split(' ');

const TECH = (
  'fix fixed bug build package upload release version update updated new upstream debian patch patches ' +
  'security vulnerability overflow buffer memory leak crash segfault library libc kernel module driver ' +
  'compiler gcc linker symbol symbols header headers install installed remove removed depends dependency ' +
  'policy standards lintian warning error test tests testsuite documentation manpage manual translation ' +
  'support configure option options default file files directory path permission permissions user users ' +
  'server client network socket protocol ssl tls certificate key password authentication encoding utf ' +
  'locale thread threads signal timeout cache config configuration script scripts python perl shell ' +
  'systemd service init daemon log logging output input parser format json xml api abi soname binary ' +
  'source tarball watch control rules copyright changelog maintainer uploader team merge branch commit'
).split(' ');

const SYLLABLES = (
  'ka lo ren tu mi sha vel dor pin gra tho quo zel bri nax fen lum cor dra vis ber tal mon sek rul ' +
  'fi ga ho ja ki lu ma ne po ra si te va wo xi yo za ble cre dri fla glo pra stu tri'
).split(' ');

const NAMES = (
  'Anna Bruno Carla Dmitri Elena Farid Greta Hiro Ines Jonas Keiko Lars Maria Nikolai Olga Pedro ' +
  'Quentin Rosa Sven Tomas Ursula Viktor Wen Xavier Yusuf Zoe'
).split(' ');
const SURNAMES = (
  'Schmidt Garcia Rossi Nakamura Novak Dubois Larsen Kowalski Silva Jensen Moreau Fischer Costa ' +
  'Andersson Horvat Petrov Yilmaz Murphy Keller Bauer Weber Lindgren Sato Ivanova'
).split(' ');

/** The word of Zipf rank `r` in the unbounded space: syllables spelling `r` in base 44. */
function wordOfRank(r: number): string {
  let w = '';
  let n = r + SYLLABLES.length; // at least two syllables
  while (n > 0) {
    w += SYLLABLES[n % SYLLABLES.length]!;
    n = Math.floor(n / SYLLABLES.length);
  }
  return w;
}

/** Draws words for one corpus: common English, package vocabulary, and a long Zipf tail. */
class Words {
  private readonly rng: Rng;
  constructor(rng: Rng) {
    this.rng = rng;
  }
  /** A rank from a Pareto tail (exponent about 1.3): new words keep appearing as the corpus grows. */
  private rare(): string {
    const u = 1 - this.rng.next();
    return wordOfRank(Math.floor(u ** -(1 / 0.3)) - 1);
  }
  word(): string {
    const x = this.rng.next();
    if (x < 0.55) return COMMON[Math.floor(COMMON.length * this.rng.next() ** 2.2)]!;
    if (x < 0.75) return TECH[Math.floor(TECH.length * this.rng.next() ** 1.6)]!;
    if (x < 0.97) return this.rare();
    if (x < 0.985) return `${this.rare()}${this.rare().replace(/^./, (c) => c.toUpperCase())}`;
    return `${this.rare()}_${this.rare()}`;
  }
  sentence(min: number, max: number): string {
    const n = this.rng.int(min, max);
    const words = Array.from({ length: n }, () => this.word());
    words[0] = words[0]!.replace(/^./, (c) => c.toUpperCase());
    return `${words.join(' ')}.`;
  }
  version(): string {
    const r = this.rng;
    return `${r.int(0, 12)}.${r.int(0, 40)}.${r.int(0, 20)}-${r.int(1, 9)}`;
  }
  hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += '0123456789abcdef'[this.rng.int(0, 15)];
    return s;
  }
  person(): string {
    const first = this.rng.pick(NAMES);
    const last = this.rng.pick(SURNAMES);
    return `${first} ${last} <${first.toLowerCase()}.${last.toLowerCase()}@example.org>`;
  }
}

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function changelog(w: Words, rng: Rng, pkg: string, bytes: number): string {
  const out: string[] = [];
  let size = 0;
  let year = 2024;
  while (size < bytes) {
    const items: string[] = [];
    for (let i = rng.int(1, 6); i > 0; i--) {
      let item = `  * ${w.sentence(5, 18)}`;
      if (rng.chance(0.15)) item += ` (CVE-${rng.int(2005, 2024)}-${rng.int(1000, 49999)})`;
      if (rng.chance(0.2)) item += ` Closes: #${rng.int(100000, 1099999)}.`;
      if (rng.chance(0.1)) item += ` Upstream commit ${w.hex(12)}.`;
      items.push(item);
    }
    if (rng.chance(0.3)) year--;
    const entry =
      `${pkg} (${w.version()}) unstable; urgency=${rng.pick(['low', 'medium', 'high'])}\n\n${items.join('\n')}\n\n` +
      ` -- ${w.person()}  ${rng.pick(DAYS)}, ${String(rng.int(1, 28)).padStart(2, '0')} ${rng.pick(MONTHS)} ${year} ` +
      `${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:00 +0000\n\n`;
    out.push(entry);
    size += entry.length;
  }
  return out.join('');
}

function readme(w: Words, rng: Rng, pkg: string, bytes: number): string {
  const out: string[] = [`# ${pkg}\n\n`];
  let size = out[0]!.length;
  let section = 0;
  while (size < bytes) {
    let s: string;
    const x = rng.next();
    if (x < 0.05) s = `\n## ${w.sentence(1, 4).slice(0, -1)} ${++section}\n\n`;
    else if (x < 0.12) {
      const lines = Array.from(
        { length: rng.int(2, 8) },
        () => `    ${w.word()}_${w.word()}(${w.word()}, ${rng.int(0, 999)});`,
      );
      s = `\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n\n`;
    } else {
      const sentences = Array.from({ length: rng.int(2, 7) }, () => w.sentence(6, 22));
      s = `${sentences.join(' ')}\n\n`;
    }
    out.push(s);
    size += s.length;
  }
  return out.join('');
}

function copyright(w: Words, rng: Rng, pkg: string): string {
  const holders = Array.from(
    { length: rng.int(1, 5) },
    () => `           ${rng.int(1995, 2024)} ${w.person()}`,
  );
  return (
    `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: ${pkg}\n\n` +
    `Files: *\nCopyright: ${holders.join('\n').trim()}\nLicense: ${rng.pick(['GPL-2+', 'LGPL-2.1+', 'MIT', 'BSD-3-clause', 'Apache-2.0'])}\n\n` +
    `License: GPL-2+\n ${Array.from({ length: rng.int(3, 12) }, () => w.sentence(8, 20)).join('\n ')}\n`
  );
}

/** A file size in bytes: log-normal around 12 KB, a few files of several MB (stored in parts). */
function fileSize(rng: Rng): number {
  const normal = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Math.min(12_000_000, Math.max(300, Math.round(Math.exp(9.4 + 1.5 * normal))));
}

/**
 * Writes about `bytes` of documentation under `dir`, one folder per package (changelog, README,
 * copyright); returns the files written and their total size.
 */
export function writeDocCorpus(dir: string, bytes: number, seed = 24): { files: number; bytes: number } {
  const rng = new Rng(seed);
  const w = new Words(rng.fork('words'));
  let written = 0;
  let files = 0;
  for (let p = 0; written < bytes; p++) {
    const pkg = `${wordOfRank(p * 7 + 3)}${rng.chance(0.3) ? `-${rng.pick(TECH)}` : ''}`;
    const folder = path.join(dir, pkg);
    mkdirSync(folder, { recursive: true });
    const docs: [string, string][] = [['changelog.Debian', changelog(w, rng, pkg, fileSize(rng))]];
    if (rng.chance(0.5)) docs.push(['README.md', readme(w, rng, pkg, fileSize(rng))]);
    if (rng.chance(0.6)) docs.push(['copyright', copyright(w, rng, pkg)]);
    for (const [name, text] of docs) {
      writeFileSync(path.join(folder, name), text);
      written += Buffer.byteLength(text);
      files++;
    }
  }
  return { files, bytes: written };
}

/**
 * Search queries over such a corpus: 1–3 words drawn as the corpus draws them (common, package and rare
 * words); with `typos`, one word of each query (of 5 letters or more) has one letter changed, so the
 * search expands it to near spellings.
 */
export function scaleQueries(n: number, typos = false, seed = 99): string[] {
  const rng = new Rng(seed);
  const w = new Words(rng.fork('queries'));
  return Array.from({ length: n }, () => {
    const words = Array.from({ length: rng.int(1, 3) }, () =>
      w
        .word()
        .toLowerCase()
        .replace(/[^a-z]/g, ''),
    );
    if (typos) {
      const at = words.findIndex((x) => x.length >= 5);
      const word = at >= 0 ? words[at]! : 'packages';
      const i = rng.int(1, word.length - 2);
      const typo = `${word.slice(0, i)}${word[i] === 'x' ? 'q' : 'x'}${word.slice(i + 1)}`;
      if (at >= 0) words[at] = typo;
      else words.push(typo);
    }
    return words.filter((x) => x !== '').join(' ');
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, mb] = process.argv.slice(2);
  console.log(writeDocCorpus(dir!, Number(mb) * 1e6));
}
