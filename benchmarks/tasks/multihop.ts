/**
 * `multihop` — facts chained across the documents of a chunk graph: "The vault code of A is the same as
 * the vault code of B." in one document, the same about B and C in another, and "The vault code of C is
 * 48213." in a third. The question names only A, so one retrieval step finds the first hop and nothing
 * more. Distractor chains reuse the attribute, and decoy facts give A other attributes, so grepping for the
 * name or the attribute alone is not enough. Scored by exact match.
 */
import { countTokens } from '../../memory/ingest/tokens.ts';
import { Rng } from '../rng.ts';
import { sizeLabel } from './text.ts';
import type { BenchTask, GenerateParams } from './types.ts';

const ADJECTIVES = [
  'Amber',
  'Silent',
  'Crimson',
  'Hidden',
  'Northern',
  'Golden',
  'Quiet',
  'Distant',
  'Hollow',
  'Bright',
  'Ancient',
  'Iron',
  'Velvet',
  'Frozen',
  'Scarlet',
  'Misty',
  'Copper',
  'Emerald',
  'Broken',
  'Wandering',
];
const NOUNS = [
  'Falcon',
  'River',
  'Harbor',
  'Meadow',
  'Lantern',
  'Tower',
  'Orchard',
  'Bridge',
  'Summit',
  'Garden',
  'Anchor',
  'Compass',
  'Beacon',
  'Quarry',
  'Willow',
  'Canyon',
  'Citadel',
  'Market',
  'Glacier',
  'Forge',
];
/** Attributes that chains carry; decoys give the start of the real chain the other ones. */
const ATTRIBUTES = ['vault code', 'signal number', 'ledger key', 'archive index', 'gate code'];
const MONTHS = ['January', 'March', 'May', 'July', 'September', 'November'];
const WORDS = [
  'survey',
  'harvest',
  'festival',
  'repair',
  'council',
  'archive',
  'caravan',
  'orchard',
  'workshop',
  'canal',
  'ledger',
  'garrison',
  'lighthouse',
  'granary',
  'ferry',
  'mill',
  'chapel',
  'foundry',
  'market',
  'school',
];
const QUALITIES = [
  'quiet',
  'busy',
  'narrow',
  'famous',
  'crumbling',
  'restored',
  'seasonal',
  'modest',
  'crowded',
  'remote',
];

/** Tokens aimed at per document. */
const DOC_TOKENS = 1000;

/** A link of a chain, as written in a document. */
interface MultihopFact {
  doc: number;
  sentence: string;
}

/** A multihop task plus its chain (for tests and reports). */
export interface MultihopTask extends BenchTask {
  context: string[];
  chain: string[];
  facts: MultihopFact[];
}

function filler(r: Rng, names: readonly string[]): string {
  const w = () => r.pick(WORDS);
  const q = () => r.pick(QUALITIES);
  const n = () => r.pick(names);
  switch (r.int(0, 4)) {
    case 0:
      return `The ${w()} council of ${n()} met in ${r.pick(MONTHS)} to discuss the ${w()} and the ${w()}.`;
    case 1:
      return `Visitors to ${n()} often remark on the ${q()} ${w()} near the old ${w()}.`;
    case 2:
      return `In ${r.int(1800, 1990)}, the ${w()} at ${n()} was rebuilt after a ${q()} winter.`;
    case 3:
      return `Records kept at ${n()} describe a ${q()} ${w()} and several ${q()} ${w()}s.`;
    default:
      return `Travellers between ${n()} and ${n()} crossed the ${q()} ${w()} by the ${w()}.`;
  }
}

/** Generates one multihop instance: 2–4 hops, a few distractor chains and decoys, about `size` tokens. */
export function generateMultihop(p: GenerateParams): MultihopTask {
  const rng = new Rng(`multihop/${p.seed}/${p.size}/${p.index}`);
  const names = rng.shuffle(ADJECTIVES.flatMap((a) => NOUNS.map((n) => `${a} ${n}`)));
  let next = 0;
  const name = () => names[next++] as string;
  const attr = rng.pick(ATTRIBUTES);
  const hops = rng.int(2, 4);
  const docs = Math.max(hops + 3, Math.round(p.size / DOC_TOKENS));
  const place = () => rng.int(0, docs - 1);
  const facts: MultihopFact[] = [];
  const addChain = (a: string, length: number): { chain: string[]; value: string } => {
    const chain = [a];
    for (let i = 0; i < length; i++) chain.push(name());
    const value = String(rng.int(10_000, 99_999));
    const used = new Set<number>();
    for (let i = 0; i < chain.length; i++) {
      let doc = place();
      // Each link of a chain sits in its own document when there are enough of them.
      for (let tries = 0; used.has(doc) && tries < 20; tries++) doc = place();
      used.add(doc);
      const sentence =
        i < length
          ? `The ${attr} of ${chain[i]} is the same as the ${attr} of ${chain[i + 1]}.`
          : `The ${attr} of ${chain[i]} is ${value}.`;
      facts.push({ doc, sentence });
    }
    return { chain, value };
  };
  const start = name();
  const main = addChain(start, hops);
  for (let i = rng.int(2, 4); i > 0; i--) addChain(name(), rng.int(1, 3));
  for (const other of ATTRIBUTES.filter((a) => a !== attr).slice(0, 2)) {
    facts.push({ doc: place(), sentence: `The ${other} of ${start} is ${rng.int(10_000, 99_999)}.` });
  }
  const fillerNames = names.slice(next, next + 60);
  const context: string[] = [];
  let tokens = 0;
  for (let d = 0; d < docs; d++) {
    // Each document aims at its share of what is left, so rounding never drifts far from the target.
    const target = Math.max(60, Math.floor((p.size - tokens) / (docs - d)));
    const title = `Document ${d + 1}: ${rng.pick(fillerNames)} records`;
    const mine = facts.filter((f) => f.doc === d).map((f) => f.sentence);
    const sentences: string[] = [];
    let docTokens = countTokens(title) + 2;
    for (const f of mine) docTokens += countTokens(f) + 1;
    while (docTokens < target - 12 || sentences.length === 0) {
      const s = filler(rng, fillerNames);
      sentences.push(s);
      docTokens += countTokens(s) + 1;
    }
    for (const f of mine) sentences.splice(rng.int(0, sentences.length), 0, f);
    const paragraphs: string[] = [];
    for (let i = 0; i < sentences.length; i += 6) paragraphs.push(sentences.slice(i, i + 6).join(' '));
    const text = `${title}\n\n${paragraphs.join('\n\n')}`;
    tokens += countTokens(text);
    context.push(text);
  }
  return {
    suite: 'multihop',
    id: `multihop-${sizeLabel(p.size)}-${p.index}`,
    size: p.size,
    question: `What is the ${attr} of ${start}? The facts you need may be spread over several documents. Give only the number.`,
    context,
    contextTokens: tokens,
    gold: { kind: 'exact', answer: main.value },
    meta: { hops, documents: docs, attribute: attr },
    chain: main.chain,
    facts,
  };
}
