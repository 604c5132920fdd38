/**
 * `oolong-pairs` — the RLM paper's OOLONG-Pairs over the same data as `oolong`: list every pair of user
 * ids (lower id first) where the users meet label conditions, some bounded by date. The answer grows with
 * the square of the qualifying users, so it cannot be guessed; scored by F1 over pairs.
 *
 * Thresholds are chosen from the data (the count at a random rank among the users), so a question keeps a
 * handful of qualifying users at any context size instead of none at 8K or thousands at 10M.
 */
import { Rng } from '../rng.ts';
import {
  AFTER,
  BEFORE,
  formatDay,
  generateOolongData,
  LABEL_GUIDE,
  LABELS,
  type OolongData,
} from './oolong-data.ts';
import { contextTokens, sizeLabel } from './text.ts';
import type { BenchTask, GenerateParams, Pair } from './types.ts';

/** The kinds of pairs question. */
export const PAIR_QUERIES = ['both', 'both_dated', 'both_two_labels', 'one_each'] as const;
export type PairQuery = (typeof PAIR_QUERIES)[number];

/** A condition on one user: at least `min` instances with `label`, optionally only before / after the bound. */
interface UserCondition {
  label: number;
  min: number;
  when: 'any' | 'before' | 'after';
}

const PREAMBLE =
  'The context lists questions asked by users, one per line, as `Date: … || User: … || Instance: <question>`. ' +
  LABEL_GUIDE;

const ANSWER_FORMAT =
  'Give every pair as (ID1, ID2) with the lower ID first, one pair per line, and nothing else; ' +
  "answer 'none' if no pair qualifies.";

/** Most users a condition may select: keeps the answer list readable (at most ~100 pairs). */
const MAX_SELECTED = 14;

function offsetOf(when: UserCondition['when']): number {
  return when === 'before' ? BEFORE : when === 'after' ? AFTER : 0;
}

/** Whether a user's tally satisfies the condition. */
function meets(tally: Uint32Array, c: UserCondition): boolean {
  return (tally[offsetOf(c.when) + c.label] as number) >= c.min;
}

/** The phrase of a condition, e.g. `at least 3 instances with the label 'human' dated after Mar 04, 2023`. */
function describeCondition(c: UserCondition, boundDay: number): string {
  const date = c.when === 'any' ? '' : ` dated ${c.when} ${formatDay(boundDay)}`;
  return `at least ${c.min} instance${c.min === 1 ? '' : 's'} with the label '${LABELS[c.label]}'${date}`;
}

/**
 * A threshold that selects about `rank` users among `candidates` (at least 1 instance, at most
 * MAX_SELECTED users when ties allow it).
 */
function threshold(
  users: Map<number, Uint32Array>,
  candidates: number[],
  label: number,
  when: UserCondition['when'],
  rank: number,
): UserCondition {
  const off = offsetOf(when);
  const counts = candidates
    .map((u) => (users.get(u) as Uint32Array)[off + label] as number)
    .sort((a, b) => b - a);
  let min = Math.max(1, counts[Math.min(rank, counts.length) - 1] ?? 1);
  while (counts.filter((n) => n >= min).length > MAX_SELECTED) min++;
  return { label, min, when };
}

/** The gold pairs of a question: `first` for one user and `second` for the other (the same for symmetric questions). */
function goldPairs(users: Map<number, Uint32Array>, first: UserCondition[], second: UserCondition[]): Pair[] {
  const select = (cs: UserCondition[]) =>
    [...users].filter(([, t]) => cs.every((c) => meets(t, c))).map(([u]) => u);
  const a = select(first);
  const b = first === second ? a : select(second);
  // Selected sets are small by construction, so the product is cheap even with 20,000 users.
  const seen = new Map<string, Pair>();
  for (const x of a) {
    for (const y of b) {
      if (x === y) continue;
      const pair: Pair = x < y ? [x, y] : [y, x];
      seen.set(`${pair[0]},${pair[1]}`, pair);
    }
  }
  return [...seen.values()].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
}

/** A pairs question over the data. */
export interface PairsQuestion {
  query: PairQuery;
  question: string;
  first: UserCondition[];
  second: UserCondition[];
  pairs: Pair[];
}

/** Builds a question of kind `query` with thresholds read off the data. */
export function pairsQuestion(rng: Rng, data: OolongData, query: PairQuery): PairsQuestion {
  const all = [...data.users.keys()];
  const l1 = rng.int(0, LABELS.length - 1);
  const l2 = (l1 + rng.int(1, LABELS.length - 1)) % LABELS.length;
  let first: UserCondition[];
  let second: UserCondition[];
  let text: string;
  const bound = data.boundDay;
  switch (query) {
    case 'both':
    case 'both_dated': {
      const when = query === 'both' ? 'any' : rng.pick(['before', 'after'] as const);
      first = [threshold(data.users, all, l1, when, rng.int(3, 7))];
      second = first;
      text = `where both users have ${describeCondition(first[0] as UserCondition, bound)}`;
      break;
    }
    case 'both_two_labels': {
      const c1 = threshold(data.users, all, l1, 'any', rng.int(6, 10));
      const selected = all.filter((u) => meets(data.users.get(u) as Uint32Array, c1));
      const c2 = threshold(data.users, selected, l2, 'any', rng.int(3, 6));
      first = [c1, c2];
      second = first;
      text = `where both users have ${describeCondition(c1, bound)} and ${describeCondition(c2, bound)}`;
      break;
    }
    case 'one_each': {
      const c1 = threshold(data.users, all, l1, 'any', rng.int(2, 4));
      const c2 = threshold(data.users, all, l2, rng.pick(['any', 'after'] as const), rng.int(2, 4));
      first = [c1];
      second = [c2];
      text = `where one user has ${describeCondition(c1, bound)} and the other user has ${describeCondition(c2, bound)}`;
      break;
    }
  }
  const question = `${PREAMBLE}\n\nList all pairs of user IDs ${text}. ${ANSWER_FORMAT}`;
  return { query, question, first, second, pairs: goldPairs(data.users, first, second) };
}

/** Generates one instance with its data; `keepRecords` keeps every item (tests). */
export function buildOolongPairs(
  p: GenerateParams,
  keepRecords = false,
): { task: BenchTask; data: OolongData; q: PairsQuestion } {
  const rng = new Rng(`oolong-pairs/${p.seed}/${p.size}/${p.index}`);
  const data = generateOolongData(rng.fork('data'), p.size, keepRecords);
  const offset = new Rng(`oolong-pairs/${p.seed}`).int(0, PAIR_QUERIES.length - 1);
  const kind = PAIR_QUERIES[(p.index + offset) % PAIR_QUERIES.length] as PairQuery;
  const q = pairsQuestion(rng.fork('query'), data, kind);
  const task: BenchTask = {
    suite: 'oolong-pairs',
    id: `oolong-pairs-${sizeLabel(p.size)}-${p.index}`,
    size: p.size,
    question: q.question,
    context: data.context,
    contextTokens: contextTokens(data.context),
    gold: { kind: 'pairs', answer: q.pairs },
    meta: { query: q.query, lines: data.lines, users: data.users.size, pairs: q.pairs.length },
  };
  return { task, data, q };
}

/** Generates one oolong-pairs instance of about `size` tokens. */
export function generateOolongPairs(p: GenerateParams): BenchTask {
  return buildOolongPairs(p).task;
}
