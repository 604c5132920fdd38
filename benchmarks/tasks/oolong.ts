/**
 * `oolong` — aggregate questions over the trec_coarse-style data of oolong-data.ts: label counts,
 * most / least common label, comparisons between labels, date-bounded counts and one user's counts.
 * Numeric answers are scored 0.75^|error| and the others by exact match, as in OOLONG.
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
import type { BenchTask, GenerateParams, Gold } from './types.ts';

/** The kinds of oolong question. */
export const OOLONG_QUERIES = [
  'count',
  'count_after',
  'count_before',
  'most_common',
  'least_common',
  'compare',
  'user_count',
] as const;
export type OolongQuery = (typeof OOLONG_QUERIES)[number];

/** The comparison answers, as OOLONG phrases them. */
const COMPARISONS = ['more common than', 'less common than', 'same frequency as'] as const;

const PREAMBLE =
  'The context lists questions asked by users, one per line, as `Date: … || User: … || Instance: <question>`. ' +
  LABEL_GUIDE;

const NUMBER_ONLY = 'Give only the number.';

/** An oolong query chosen for some data: the question, the gold answer and its kind. */
export interface OolongQuestion {
  query: OolongQuery;
  question: string;
  gold: Gold;
}

const count = (tally: Uint32Array, offset: number, label: number): number => tally[offset + label] as number;

/** A label index whose count is unique at the top (or bottom), or undefined on a tie. */
function extreme(tally: Uint32Array, most: boolean): number | undefined {
  let best = 0;
  for (let i = 1; i < LABELS.length; i++) {
    if (most ? count(tally, 0, i) > count(tally, 0, best) : count(tally, 0, i) < count(tally, 0, best))
      best = i;
  }
  const ties = LABELS.filter((_, i) => count(tally, 0, i) === count(tally, 0, best)).length;
  return ties === 1 ? best : undefined;
}

/** Picks a query for the data; a most / least question with a tie falls back to a count. */
export function oolongQuestion(rng: Rng, data: OolongData, query: OolongQuery): OolongQuestion {
  const label = rng.int(0, LABELS.length - 1);
  const name = LABELS[label] as string;
  const day = formatDay(data.boundDay);
  const ask = (q: string, gold: Gold): OolongQuestion => ({ query, question: `${PREAMBLE}\n\n${q}`, gold });
  switch (query) {
    case 'count':
      return ask(`How many instances have the label '${name}'? ${NUMBER_ONLY}`, {
        kind: 'numeric',
        answer: count(data.labels, 0, label),
      });
    case 'count_after':
      return ask(`How many instances with the label '${name}' are dated after ${day}? ${NUMBER_ONLY}`, {
        kind: 'numeric',
        answer: count(data.labels, AFTER, label),
      });
    case 'count_before':
      return ask(`How many instances with the label '${name}' are dated before ${day}? ${NUMBER_ONLY}`, {
        kind: 'numeric',
        answer: count(data.labels, BEFORE, label),
      });
    case 'most_common':
    case 'least_common': {
      const most = query === 'most_common';
      const best = extreme(data.labels, most);
      if (best === undefined) return oolongQuestion(rng, data, 'count');
      return ask(
        `Which label is the ${most ? 'most' : 'least'} common among all instances? Give only the label.`,
        {
          kind: 'label',
          answer: LABELS[best] as string,
          labels: LABELS,
        },
      );
    }
    case 'compare': {
      const other = (label + rng.int(1, LABELS.length - 1)) % LABELS.length;
      const a = count(data.labels, 0, label);
      const b = count(data.labels, 0, other);
      const answer = a > b ? COMPARISONS[0] : a < b ? COMPARISONS[1] : COMPARISONS[2];
      return ask(
        `Is the label '${name}' more common than, less common than, or the same frequency as the label ` +
          `'${LABELS[other]}'? Answer with exactly one of: ${COMPARISONS.join(', ')}.`,
        { kind: 'comparison', answer },
      );
    }
    case 'user_count': {
      // One of the most active users, so the answer is not trivially zero.
      const active = [...data.users.entries()]
        .sort((x, y) => total(y[1]) - total(x[1]) || x[0] - y[0])
        .slice(0, 5);
      const [user, tally] = rng.pick(active);
      return ask(`How many instances from user ${user} have the label '${name}'? ${NUMBER_ONLY}`, {
        kind: 'numeric',
        answer: count(tally, 0, label),
      });
    }
  }
}

function total(tally: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < LABELS.length; i++) n += tally[i] as number;
  return n;
}

/** Generates one oolong instance with its data; `keepRecords` keeps every item (tests). */
export function buildOolong(p: GenerateParams, keepRecords = false): { task: BenchTask; data: OolongData } {
  const rng = new Rng(`oolong/${p.seed}/${p.size}/${p.index}`);
  const data = generateOolongData(rng.fork('data'), p.size, keepRecords);
  // Consecutive indexes ask different kinds of question; the seed picks where the cycle starts.
  const offset = new Rng(`oolong/${p.seed}`).int(0, OOLONG_QUERIES.length - 1);
  const kind = OOLONG_QUERIES[(p.index + offset) % OOLONG_QUERIES.length] as OolongQuery;
  const q = oolongQuestion(rng.fork('query'), data, kind);
  const task: BenchTask = {
    suite: 'oolong',
    id: `oolong-${sizeLabel(p.size)}-${p.index}`,
    size: p.size,
    question: q.question,
    context: data.context,
    contextTokens: contextTokens(data.context),
    gold: q.gold,
    meta: { query: q.query, lines: data.lines, users: data.users.size },
  };
  return { task, data };
}

/** Generates one oolong instance of about `size` tokens. */
export function generateOolong(p: GenerateParams): BenchTask {
  return buildOolong(p).task;
}
