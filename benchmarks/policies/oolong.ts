/**
 * The oolong / oolong-pairs part of the smoke policy: repl code that parses the item lines, labels them
 * (through sub-calls when they are available, with a keyword heuristic otherwise and inside the sub-calls)
 * and computes the asked statistic. The heuristic is deliberately imperfect, like a quick model-written
 * classifier would be: some templates fool it, so scores below 1 are expected and tests predict them.
 *
 * Everything here is JavaScript source for the sandbox, kept free of `$1`-style text except where a
 * scripted rule's capture groups are meant to be substituted.
 */

/** The keyword classifier, as sandbox source. */
const CLASSIFY_JS = String.raw`function classify(q) {
  const t = q.toLowerCase();
  if (/stand for|abbreviation|acronym|full form|short for/.test(t)) return 'abbreviation';
  if (/^who\b/.test(t)) return 'human';
  if (/^(where|in what state)\b|what country|capital of|which city/.test(t)) return 'location';
  if (/^(how many|how far|how long|how much|when)\b|what year|population|boiling point/.test(t)) return 'numeric';
  if (/^(why|how does|describe)\b|\bmean\?|difference between|origin of|causes/.test(t)) return 'description';
  return 'entity';
}`;

/** The heuristic as a host function, built from the same source, so tests can predict the policy's answers. */
export const heuristicLabel = new Function(`${CLASSIFY_JS}\nreturn classify;`)() as (text: string) => string;

/** The prompt of a labelling sub-call; the depth-1 rule matches its start. */
export const LABEL_PROMPT =
  'Label every line of the context with one of: description, entity, human, numeric, location, abbreviation. Reply with a JSON array of labels, one per line, in order.';

/** Root code that leaves `items` (`{day, user, text, label}`) labelled, plus `LABELS` and `parseDay`. */
const PREPARE_JS = String.raw`${CLASSIFY_JS}
const LABELS = ['description', 'entity', 'human', 'numeric', 'location', 'abbreviation'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
function parseDay(s) {
  const m = /^(\w{3}) (\d{2}), (\d{4})/.exec(s);
  return Number(m[3]) * 10000 + (MONTHS.indexOf(m[1]) + 1) * 100 + Number(m[2]);
}
const text = Array.isArray(context) ? context.join('\n') : context;
const items = [];
for (const line of text.split('\n')) {
  const m = /^Date: (\w{3} \d{2}, \d{4}) \|\| User: (\d+) \|\| Instance: (.*)/.exec(line);
  if (m) items.push({ day: parseDay(m[1]), user: Number(m[2]), text: m[3], label: null });
}
const per = Math.max(150, Math.ceil(items.length / 64));
const groups = [];
for (let i = 0; i < items.length; i += per) groups.push(items.slice(i, i + per));
const replies = await Promise.all(groups.map((g) => llm_query(${JSON.stringify(LABEL_PROMPT)}, g.map((x) => x.text).join('\n'))));
let viaSubCalls = 0;
groups.forEach((g, gi) => {
  let labels = null;
  try {
    const parsed = JSON.parse(String(replies[gi]));
    if (Array.isArray(parsed) && parsed.length === g.length) labels = parsed;
  } catch (e) {}
  if (labels) viaSubCalls++;
  g.forEach((x, i) => { x.label = labels ? labels[i] : classify(x.text); });
});
print('items', items.length, 'groups', groups.length, 'labelled by sub-calls', viaSubCalls);
`;

const block = (code: string): string => `\`\`\`repl\n${code}\n\`\`\``;

/** Depth-1 reply: label the lines of the sub-call's context with the heuristic. */
export const LABEL_REPLY = block(String.raw`${CLASSIFY_JS}
const lines = (Array.isArray(context) ? context.join('\n') : context).split('\n');
FINAL(JSON.stringify(lines.map((l) => classify(l))));`);

const count = `const countOf = (label, keep) => items.filter((x) => x.label === label && (!keep || keep(x))).length;`;

/** Root replies for the oolong question kinds, keyed by the regex (after the preamble) that captures their parameters. */
export const OOLONG_REPLIES: { match: string; code: string }[] = [
  {
    match: String.raw`How many instances have the label '(\w+)'\?`,
    code: `${count}
FINAL(String(countOf('$1')));`,
  },
  {
    match: String.raw`How many instances with the label '(\w+)' are dated (after|before) (\w{3} \d{2}, \d{4})\?`,
    code: `${count}
const bound = parseDay('$3');
FINAL(String(countOf('$1', (x) => ('$2' === 'after' ? x.day > bound : x.day < bound))));`,
  },
  {
    match: String.raw`Which label is the (most|least) common among all instances\?`,
    code: `${count}
const ranked = LABELS.map((l) => [l, countOf(l)]).sort((a, b) => ('$1' === 'most' ? b[1] - a[1] : a[1] - b[1]));
FINAL(ranked[0][0]);`,
  },
  {
    match: String.raw`Is the label '(\w+)' more common than, less common than, or the same frequency as the label '(\w+)'\?`,
    code: `${count}
const a = countOf('$1');
const b = countOf('$2');
FINAL(a > b ? 'more common than' : a < b ? 'less common than' : 'same frequency as');`,
  },
  {
    match: String.raw`How many instances from user (\d+) have the label '(\w+)'\?`,
    code: `${count}
FINAL(String(countOf('$2', (x) => x.user === $1)));`,
  },
];

/** A condition as sandbox source: `min`, `label`, `when` ('', 'after' or 'before') and the bound date text. */
const PAIRS_JS = String.raw`const users = new Map();
for (const x of items) {
  if (!users.has(x.user)) users.set(x.user, []);
  users.get(x.user).push(x);
}
function meets(list, min, label, when, date) {
  const bound = when ? parseDay(date) : 0;
  return list.filter((x) => x.label === label && (!when || (when === 'after' ? x.day > bound : x.day < bound))).length >= Number(min);
}
function pairsOf(first, second) {
  const ids = [...users.keys()];
  const a = ids.filter((u) => first(users.get(u)));
  const b = ids.filter((u) => second(users.get(u)));
  const seen = new Map();
  for (const x of a) for (const y of b) if (x !== y) seen.set(Math.min(x, y) + ',' + Math.max(x, y), [Math.min(x, y), Math.max(x, y)]);
  const out = [...seen.values()].sort((p, q) => p[0] - q[0] || p[1] - q[1]).map((p) => '(' + p[0] + ', ' + p[1] + ')');
  return out.length ? out.join('\n') : 'none';
}`;

/** Root replies for the oolong-pairs question kinds (the two-label form first: it is the longer match). */
export const PAIRS_REPLIES: { match: string; code: string }[] = [
  {
    match: String.raw`where both users have at least (\d+) instances? with the label '(\w+)' and at least (\d+) instances? with the label '(\w+)'\.`,
    code: `${PAIRS_JS}
const both = (l) => meets(l, $1, '$2', '', '') && meets(l, $3, '$4', '', '');
FINAL(pairsOf(both, both));`,
  },
  {
    match: String.raw`where both users have at least (\d+) instances? with the label '(\w+)'(?: dated (after|before) (\w{3} \d{2}, \d{4}))?\.`,
    code: `${PAIRS_JS}
const both = (l) => meets(l, $1, '$2', '$3', '$4');
FINAL(pairsOf(both, both));`,
  },
  {
    match: String.raw`where one user has at least (\d+) instances? with the label '(\w+)' and the other user has at least (\d+) instances? with the label '(\w+)'(?: dated (after|before) (\w{3} \d{2}, \d{4}))?\.`,
    code: `${PAIRS_JS}
FINAL(pairsOf((l) => meets(l, $1, '$2', '', ''), (l) => meets(l, $3, '$4', '$5', '$6')));`,
  },
];

/** The full root reply for one oolong / oolong-pairs question kind. */
export function oolongReply(code: string): string {
  return block(`${PREPARE_JS}\n${code}`);
}
