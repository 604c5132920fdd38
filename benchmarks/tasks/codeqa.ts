/**
 * `codeqa` — multiple-choice questions over a source tree whose answers need several files (LongBench-v2
 * CodeQA in the RLM paper). Two kinds: the value of a constant computed through imports across files, and
 * how many files import a given module (which needs every file). Trees come from codeqa-tree.ts.
 */
import { Rng } from '../rng.ts';
import {
  type ConstantInfo,
  fileDocument,
  importGraph,
  type SourceFile,
  synthesizeTree,
} from './codeqa-tree.ts';
import { contextTokens, sizeLabel } from './text.ts';
import type { BenchTask, GenerateParams } from './types.ts';

const LETTERS = ['A', 'B', 'C', 'D'] as const;

/** Where codeqa's files come from: a synthetic tree (default) or given files (e.g. `readTree('src')`). */
export interface CodeqaOptions {
  files?: readonly SourceFile[];
}

/** Files an answer depends on, following a constant to its literal. */
function constantChain(name: string, constants: Map<string, ConstantInfo>): ConstantInfo[] {
  const chain: ConstantInfo[] = [];
  for (
    let c = constants.get(name);
    c !== undefined;
    c = c.from === undefined ? undefined : constants.get(c.from)
  )
    chain.push(c);
  return chain;
}

/** Four distinct options with the answer at a random letter. */
function choices(rng: Rng, answer: number, distractors: number[]): { options: string[]; letter: string } {
  const pool = [...new Set(distractors.filter((d) => d !== answer && d >= 0))];
  for (let d = 1; pool.length < 3; d++)
    for (const x of [answer + d, answer - d])
      if (x >= 0 && !pool.includes(x) && pool.length < 3) pool.push(x);
  const options = rng.shuffle([answer, ...rng.shuffle(pool).slice(0, 3)]).map(String);
  return { options, letter: LETTERS[options.indexOf(String(answer))] as string };
}

function format(question: string, options: string[]): string {
  const lines = options.map((o, i) => `${LETTERS[i]}) ${o}`);
  return `${question}\n\nOptions:\n${lines.join('\n')}\n\nAnswer with the letter of the correct option only.`;
}

/** Keeps whole files, in order, until the token target (at least two files). */
function fitFiles(files: readonly SourceFile[], size: number): SourceFile[] {
  const out: SourceFile[] = [];
  let tokens = 0;
  for (const f of files) {
    const n = contextTokens(fileDocument(f));
    if (out.length >= 2 && tokens + n > size) break;
    out.push(f);
    tokens += n;
  }
  return out;
}

/** Generates one codeqa instance: even indexes ask a constant's value (synthetic trees), odd ones an import count. */
export function generateCodeqa(p: GenerateParams, opts: CodeqaOptions = {}): BenchTask {
  const rng = new Rng(`codeqa/${p.seed}/${p.size}/${p.index}`);
  const tree = opts.files === undefined ? synthesizeTree(rng.fork('tree'), p.size) : undefined;
  const files = tree?.files ?? fitFiles(opts.files ?? [], p.size);
  const q = rng.fork('question');
  let question: string;
  let options: string[];
  let letter: string;
  let kind: string;
  // Only even indexes ask for a constant; the chain walk over every constant is skipped otherwise.
  const deep =
    tree && p.index % 2 === 0
      ? [...tree.constants.entries()].filter(
          ([n]) => new Set(constantChain(n, tree.constants).map((c) => c.file)).size >= 2,
        )
      : [];
  if (tree && deep.length > 0) {
    // Prefer the constants whose value passes through the most files.
    const depth = (n: string) => new Set(constantChain(n, tree.constants).map((c) => c.file)).size;
    const best = deep.reduce((m, [n]) => Math.max(m, depth(n)), 0);
    const [name, info] = q.pick(deep.filter(([n]) => depth(n) >= Math.min(best, 3)));
    const chain = constantChain(name, tree.constants);
    const literal = (chain[chain.length - 1] as ConstantInfo).value;
    const wrongOp =
      info.op === '+'
        ? (tree.constants.get(info.from as string) as ConstantInfo).value * (info.operand as number)
        : (tree.constants.get(info.from as string) as ConstantInfo).value + (info.operand as number);
    ({ options, letter } = choices(q, info.value, [wrongOp, ...chain.slice(1).map((c) => c.value), literal]));
    question = `What is the value of the constant ${name} exported by ${info.file}? Constants may be computed from constants imported from other files.`;
    kind = 'constant';
  } else {
    const graph = importGraph(files);
    const importers = new Map<string, number>(files.map((f) => [f.path, 0]));
    for (const targets of graph.values())
      for (const t of targets) importers.set(t, (importers.get(t) ?? 0) + 1);
    const ranked = [...importers.entries()].filter(([, n]) => n >= 2);
    const [target, n] = ranked.length > 0 ? q.pick(ranked) : q.pick([...importers.entries()]);
    ({ options, letter } = choices(q, n, [n + 1, n - 1, n + 2, n - 2, n * 2]));
    question =
      `How many files in the tree import from ${target}? Count a file once if it has any \`import … from\` ` +
      `or \`export … from\` statement whose relative path resolves to ${target}.`;
    kind = 'importers';
  }
  const context = files.map(fileDocument);
  return {
    suite: 'codeqa',
    id: `codeqa-${sizeLabel(p.size)}-${p.index}`,
    size: p.size,
    question: format(question, options),
    context,
    contextTokens: contextTokens(context),
    gold: { kind: 'choice', answer: letter, options },
    meta: { query: kind, files: files.length },
  };
}
