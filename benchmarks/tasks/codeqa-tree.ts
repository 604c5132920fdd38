/**
 * Source trees for `codeqa`: a seeded synthetic TypeScript tree of any size (the default: stable across
 * commits, so scores stay comparable), or a real folder read from disk (this repository's `src/` works).
 * Also the one definition of "file A imports from file B" that questions and checks rely on.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { countTokens } from '../../memory/ingest/tokens.ts';
import type { Rng } from '../rng.ts';

/** One source file; `path` is relative to the tree root, with `/` separators. */
export interface SourceFile {
  path: string;
  text: string;
}

/** A constant of the synthetic tree: its file and integer value. */
export interface ConstantInfo {
  file: string;
  value: number;
  /** The constant it is computed from, if any (same file or imported). */
  from?: string;
  op?: '+' | '*';
  operand?: number;
}

const AREAS = ['core', 'net', 'store', 'ui', 'util', 'auth', 'jobs', 'render'];
const NOUNS = [
  'cache',
  'queue',
  'parser',
  'router',
  'session',
  'buffer',
  'schema',
  'loader',
  'worker',
  'filter',
  'ledger',
  'socket',
  'stream',
  'token',
  'index',
  'config',
  'layout',
  'mailer',
  'metric',
  'policy',
];
const SUFFIXES = ['LIMIT', 'SIZE', 'RATE', 'DEPTH', 'COUNT', 'OFFSET', 'WIDTH', 'TIMEOUT'];
const VERBS = ['load', 'merge', 'scan', 'flush', 'split', 'check', 'build', 'parse', 'sort', 'trim'];

/** The text of a file as one context document: a header line naming it, then the source. */
export function fileDocument(f: SourceFile): string {
  return `// file: ${f.path}\n${f.text}`;
}

const IMPORT_RE = /^\s*(?:import|export)\b[^;]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Files each file imports from: relative `import … from` / `export … from` specifiers resolved within the tree. */
export function importGraph(files: readonly SourceFile[]): Map<string, Set<string>> {
  const known = new Set(files.map((f) => f.path));
  const graph = new Map<string, Set<string>>();
  for (const f of files) {
    const targets = new Set<string>();
    for (const m of f.text.matchAll(IMPORT_RE)) {
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(f.path), m[1] as string));
      const candidates = [resolved, resolved.replace(/\.js$/, '.ts')];
      const hit = candidates.find((c) => known.has(c));
      if (hit !== undefined && hit !== f.path) targets.add(hit);
    }
    graph.set(f.path, targets);
  }
  return graph;
}

/** A synthetic tree of about `size` tokens, with every constant's value. */
export function synthesizeTree(
  rng: Rng,
  size: number,
): { files: SourceFile[]; constants: Map<string, ConstantInfo> } {
  const files: SourceFile[] = [];
  const constants = new Map<string, ConstantInfo>();
  const exported: { file: string; name: string }[] = [];
  let tokens = 0;
  for (let i = 0; tokens < size - 150 || files.length < 4; i++) {
    const area = AREAS[i % AREAS.length] as string;
    const round = Math.floor(i / (AREAS.length * NOUNS.length));
    const noun = `${NOUNS[Math.floor(i / AREAS.length) % NOUNS.length]}${round === 0 ? '' : round + 1}`;
    const file = `src/${area}/${noun}.ts`;
    const prefix = `${area}_${noun}`.toUpperCase();
    const imports = new Map<string, string[]>();
    const lines: string[] = [];
    const suffixes = rng.shuffle(SUFFIXES);
    const constCount = rng.int(2, 3);
    const mine: string[] = [];
    for (let c = 0; c < constCount; c++) {
      const name = `${prefix}_${suffixes[c]}`;
      // The first constant is a literal; later ones derive from an earlier constant here or elsewhere.
      const source =
        c === 0
          ? undefined
          : exported.length > 0 && rng.chance(0.7)
            ? rng.pick(exported)
            : { file, name: mine[c - 1] as string };
      if (source === undefined) {
        const value = rng.int(2, 99);
        constants.set(name, { file, value });
        lines.push(`export const ${name} = ${value};`);
      } else {
        const base = (constants.get(source.name) as ConstantInfo).value;
        const operand = rng.int(2, 9);
        // Products stay far below 2^53 so every reader computes the same integer.
        const op = rng.chance(0.5) && base < 1e9 ? '*' : '+';
        constants.set(name, {
          file,
          value: op === '+' ? base + operand : base * operand,
          from: source.name,
          op,
          operand,
        });
        lines.push(`export const ${name} = ${source.name} ${op} ${operand};`);
        if (source.file !== file)
          imports.set(source.file, [...(imports.get(source.file) ?? []), source.name]);
      }
      mine.push(name);
    }
    const fnCount = rng.int(2, 4);
    for (let k = 0; k < fnCount; k++) {
      const verb = rng.pick(VERBS);
      const fn = `${verb}${noun.charAt(0).toUpperCase()}${noun.slice(1)}${k}`;
      const use = rng.pick(mine);
      lines.push(
        '',
        `/** ${verb[0]?.toUpperCase()}${verb.slice(1)}s ${noun} entries in batches of ${use}. */`,
        `export function ${fn}(items: number[]): number[] {`,
        `  const out: number[] = [];`,
        `  for (const item of items) {`,
        `    if (item % ${rng.int(2, 7)} === 0) out.push(item + ${use});`,
        `    else out.push(Math.max(0, item - ${rng.int(1, 30)}));`,
        '  }',
        `  return out.slice(0, ${use});`,
        '}',
      );
    }
    const header = [...imports].map(([from, names]) => {
      let rel = path.posix.relative(path.posix.dirname(file), from);
      if (!rel.startsWith('.')) rel = `./${rel}`;
      return `import { ${[...new Set(names)].join(', ')} } from '${rel}';`;
    });
    const text = `${[`/** The ${noun} module of the ${area} area. */`, ...header, '', ...lines].join('\n')}\n`;
    files.push({ path: file, text });
    for (const name of mine) exported.push({ file, name });
    tokens += countTokens(fileDocument({ path: file, text }));
  }
  return { files, constants };
}

/** Reads `.ts` / `.js` files under `root` (sorted, `node_modules` and dot folders skipped), paths relative to `root`'s parent. */
export function readTree(root: string): SourceFile[] {
  const base = path.dirname(path.resolve(root));
  const out: SourceFile[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('.') || name === 'node_modules') continue;
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) {
        out.push({
          path: path.relative(base, full).split(path.sep).join('/'),
          text: readFileSync(full, 'utf8'),
        });
      }
    }
  };
  walk(path.resolve(root));
  return out;
}
