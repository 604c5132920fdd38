/**
 * The data behind `oolong` and `oolong-pairs`, in the style of OOLONG's trec_coarse split: one line per
 * item, `Date: … || User: … || Instance: <question>`, where each instance is a general-knowledge question
 * written from the templates of one of six hidden labels (TREC's coarse answer types). A model has to
 * classify every instance to answer anything, which is what makes the task long-context work rather than
 * retrieval. Generation streams: only the per-label and per-user tallies are kept, unless the caller asks
 * for the records (tests do, to recompute answers independently).
 */
import type { Rng } from '../rng.ts';
import { LineBuilder } from './text.ts';

/** The hidden labels, in a fixed order (indexes into tallies). */
export const LABELS = ['description', 'entity', 'human', 'numeric', 'location', 'abbreviation'] as const;
type Label = (typeof LABELS)[number];

/** What the model is told about the labels. */
export const LABEL_GUIDE =
  'Each instance is a question that belongs to exactly one of six labels, by the kind of answer it asks ' +
  'for: description (a description, definition, reason or abstract concept), entity (a thing, animal, ' +
  'object, food, colour, product...), human (a person or group of people), numeric (a number, date, ' +
  'count, distance, amount...), location (a place) or abbreviation (an abbreviation or what one stands ' +
  'for). The labels are not written in the data: infer each one from the question.';

const COUNTRIES = [
  'Norway',
  'Peru',
  'Kenya',
  'Japan',
  'Canada',
  'Chile',
  'Egypt',
  'Finland',
  'Vietnam',
  'Portugal',
  'Mexico',
  'India',
];
const CITIES = [
  'Lisbon',
  'Nairobi',
  'Osaka',
  'Toronto',
  'Lima',
  'Cairo',
  'Hanoi',
  'Oslo',
  'Seville',
  'Melbourne',
  'Krakow',
  'Quito',
];
const ACRONYMS = [
  'NASA',
  'UNESCO',
  'SCUBA',
  'LASER',
  'RADAR',
  'NATO',
  'HTML',
  'DNA',
  'GPS',
  'UNICEF',
  'FIFA',
  'CPU',
];
const LONG_NAMES = [
  'the World Health Organization',
  'the International Space Station',
  'Central Standard Time',
  'the European Union',
  'personal identification number',
  'as soon as possible',
  'the Food and Drug Administration',
];
const DEVICES = [
  'compass',
  'barometer',
  'microwave oven',
  'refrigerator',
  'jet engine',
  'thermostat',
  'telescope',
  'printing press',
  'steam engine',
  'solar panel',
];
const ANIMALS = ['axolotl', 'okapi', 'pangolin', 'quokka', 'narwhal', 'tapir', 'capybara', 'kinkajou'];

/** A template: a function of the rng that writes one question. */
type Template = (r: Rng) => string;

const t = (parts: TemplateStringsArray, ...slots: (readonly string[])[]): Template => {
  return (r) =>
    parts.reduce((acc, part, i) => acc + part + (i < slots.length ? r.pick(slots[i] as string[]) : ''), '');
};
const year = (r: Rng): string => String(r.int(1950, 2020));

/** Question templates per label. Several are worded to defeat first-word heuristics on purpose. */
const TEMPLATES: Record<Label, readonly Template[]> = {
  description: [
    t`What does the word ${['serendipity', 'ephemeral', 'ubiquitous', 'quixotic', 'melancholy', 'gregarious', 'laconic', 'petrichor']} mean?`,
    t`Why do ${['cats', 'owls', 'bees', 'whales', 'wolves', 'dolphins', 'parrots', 'camels']} ${['purr', 'migrate', 'sleep so much', 'hum', 'sing', 'travel in groups', 'build nests']}?`,
    t`How does a ${DEVICES} work?`,
    t`What is the difference between ${['weather', 'a virus', 'a lake', 'a comet', 'an alloy']} and ${['climate', 'a bacterium', 'a pond', 'an asteroid', 'a compound']}?`,
    t`What is the origin of the phrase "${['break the ice', 'spill the beans', 'bite the bullet', 'under the weather', 'once in a blue moon']}"?`,
    t`What is ${['photosynthesis', 'inflation', 'democracy', 'entropy', 'irony', 'nostalgia', 'recursion', 'osmosis']}?`,
    t`Describe ${['the French Revolution', 'the Industrial Revolution', 'the Renaissance', 'the gold rush', 'the Reformation']} in a few words.`,
    t`What causes ${['thunder', 'rainbows', 'earthquakes', 'hiccups', 'tides', 'the northern lights', 'jet lag', 'rust']}?`,
  ],
  entity: [
    t`What kind of animal is a ${ANIMALS}?`,
    t`What color is a ${['ripe mango', 'kiwi', 'lime', 'blueberry', 'papaya', 'pomegranate']}?`,
    t`What food is traditionally eaten on ${['Thanksgiving', 'New Year', 'Easter', 'Diwali', 'Hanukkah', 'Midsummer']}?`,
    t`Name a ${['bird that cannot fly', 'mammal that lays eggs', 'fish that can walk on land', 'plant that eats insects', 'metal that is liquid at room temperature', 'planet that has rings']}.`,
    t`What instrument did ${['Miles Davis', 'Jimi Hendrix', 'Yo-Yo Ma', 'Louis Armstrong', 'Ravi Shankar', 'Glenn Gould']} play?`,
    t`What is the best-selling ${['video game', 'car model', 'board game', 'novel', 'toy', 'smartphone']} of all time?`,
    t`Which sport is most popular in ${COUNTRIES}?`,
  ],
  human: [
    t`Who invented the ${DEVICES}?`,
    t`Who wrote ${['Moby Dick', 'War and Peace', 'Don Quixote', 'The Odyssey', 'Pride and Prejudice', 'The Divine Comedy', 'Hamlet']}?`,
    t`Who was the first ${['president', 'prime minister', 'king', 'chancellor', 'governor']} of ${COUNTRIES}?`,
    t`What is the name of the ${['chemist', 'physicist', 'biologist', 'astronomer']} who discovered ${['penicillin', 'radium', 'the electron', 'Neptune', 'oxygen']}?`,
    (r) =>
      `Which ${r.pick(['author', 'painter', 'physicist', 'actor', 'architect'])} won the ${r.pick(['Nobel Prize', 'Pritzker Prize', 'Booker Prize', 'Academy Award'])} in ${year(r)}?`,
    t`Who is known as the father of ${['modern chemistry', 'geometry', 'computer science', 'medicine', 'economics', 'genetics']}?`,
    t`Who painted ${['the Mona Lisa', 'The Starry Night', 'Guernica', 'The Night Watch', 'The Scream']}?`,
  ],
  numeric: [
    t`How many ${['islands', 'lakes', 'bridges', 'museums', 'languages', 'time zones']} are there in ${COUNTRIES}?`,
    t`When was ${['the Red Cross', 'Harvard University', 'the United Nations', 'the Royal Society', 'the BBC']} founded?`,
    t`What year did ${['the moon landing', 'the fall of the Berlin Wall', 'the great fire of London', 'the first transatlantic flight']} happen?`,
    t`How far is ${CITIES} from ${CITIES}?`,
    t`How long does a ${ANIMALS} live?`,
    t`What is the population of ${CITIES}?`,
    t`How much does a ${['blue whale', 'grand piano', 'bowling ball', 'hot air balloon', 'gallon of milk']} weigh?`,
    t`What is the boiling point of ${['water', 'ethanol', 'mercury', 'olive oil', 'liquid nitrogen']}?`,
  ],
  location: [
    t`Where is ${['Machu Picchu', 'the Taj Mahal', 'Angkor Wat', 'Petra', 'the Alhambra', 'Stonehenge']} located?`,
    t`What country is ${CITIES} in?`,
    (r) =>
      `Which city hosted the ${r.pick(['Olympic Games', 'World Cup final', 'World Expo'])} in ${year(r)}?`,
    t`In what state is ${['Mount Rushmore', 'the Grand Canyon', 'Yellowstone', 'the Alamo', 'Niagara Falls']}?`,
    t`Where can you find ${['kangaroos', 'pandas', 'lemurs', 'polar bears', 'koalas', 'flamingos']} in the wild?`,
    t`What is the capital of ${COUNTRIES}?`,
    t`Which river flows through ${CITIES}?`,
  ],
  abbreviation: [
    t`What does ${ACRONYMS} stand for?`,
    t`What is the abbreviation for ${LONG_NAMES}?`,
    t`What is the full form of ${ACRONYMS}?`,
    t`What do the letters ${ACRONYMS} mean?`,
    t`${ACRONYMS} is short for what?`,
    t`What is the acronym for ${LONG_NAMES}?`,
  ],
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Day 0 of the data: items are dated over the three years that follow. */
const EPOCH_MS = Date.UTC(2021, 0, 1);
const DAY_SPAN = 1095;

/** A day index as OOLONG writes dates, e.g. `Mar 04, 2023`. */
export function formatDay(day: number): string {
  const d = new Date(EPOCH_MS + day * 86_400_000);
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, '0')}, ${d.getUTCFullYear()}`;
}

/** One generated item. */
interface OolongRecord {
  day: number;
  user: number;
  label: number;
  text: string;
}

/** Per-user tally layout: 6 label counts overall, then before the bound day, then after it. */
const TALLY_WIDTH = 18;
export const BEFORE = 6;
export const AFTER = 12;

/** The generated data and what queries need to know about it. */
export interface OolongData {
  context: string;
  lines: number;
  /** The day date-bounded queries refer to (strictly before / strictly after). */
  boundDay: number;
  /** Items per label: overall, before the bound, after the bound (TALLY_WIDTH numbers). */
  labels: Uint32Array;
  /** Per-user tallies in the same layout. */
  users: Map<number, Uint32Array>;
  /** Every item, only when asked for. */
  records?: OolongRecord[];
}

/** The line format of one item. */
function formatItem(r: OolongRecord): string {
  return `Date: ${formatDay(r.day)} || User: ${r.user} || Instance: ${r.text}`;
}

/** Generates items up to `size` tokens. Label frequencies are skewed (and shuffled per seed) so "most / least common" questions have clear answers at scale. */
export function generateOolongData(rng: Rng, size: number, keepRecords = false): OolongData {
  const shares = rng.shuffle([0.28, 0.22, 0.17, 0.14, 0.11, 0.08]);
  const estimatedLines = Math.max(8, Math.round(size / 26));
  const userCount = Math.min(20_000, Math.max(8, Math.round(estimatedLines / 5)));
  const ids = new Set<number>();
  while (ids.size < userCount) ids.add(rng.int(10_000, 99_999));
  const userIds = [...ids];
  const boundDay = rng.int(Math.round(DAY_SPAN * 0.25), Math.round(DAY_SPAN * 0.75));
  const labels = new Uint32Array(TALLY_WIDTH);
  const users = new Map<number, Uint32Array>();
  const records: OolongRecord[] | undefined = keepRecords ? [] : undefined;
  const b = new LineBuilder();
  while (b.tokens < size) {
    const label = rng.weighted(shares);
    // A squared uniform skews activity: a few users write much, most write little, as in real logs.
    const user = userIds[Math.floor(rng.next() ** 2 * userIds.length)] as number;
    const rec: OolongRecord = {
      day: rng.int(0, DAY_SPAN - 1),
      user,
      label,
      text: rng.pick(TEMPLATES[LABELS[label] as Label])(rng),
    };
    const line = formatItem(rec);
    if (b.tokens + 40 > size && b.lines > 0) break;
    b.push(line);
    records?.push(rec);
    let u = users.get(user);
    if (!u) {
      u = new Uint32Array(TALLY_WIDTH);
      users.set(user, u);
    }
    for (const tally of [labels, u]) {
      tally[label] = (tally[label] as number) + 1;
      if (rec.day < boundDay) tally[BEFORE + label] = (tally[BEFORE + label] as number) + 1;
      if (rec.day > boundDay) tally[AFTER + label] = (tally[AFTER + label] as number) + 1;
    }
  }
  return { context: b.finish(), lines: b.lines, boundDay, labels, users, ...(records ? { records } : {}) };
}
