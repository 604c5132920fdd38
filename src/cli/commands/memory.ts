/**
 * Memory commands: `rlm remember | recall | forget | topics | decay | restore | consolidate`. Memories
 * live in the store's chunk graph (memory/engine/memories.ts); these are thin layers over the library.
 */

import { RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { checkRemember, parseWhen } from '../../../memory/memories/memory-model.ts';
import { consolidateAfterRemember, modelSummarizer } from '../../runtime/consolidate.ts';
import { createModel } from '../../runtime/providers/index.ts';
import { MODEL_SPECS } from '../../runtime/providers/specs.ts';
import { recallResults } from '../../shapes.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, readStdin, shown, writeJson } from '../io.ts';
import { checkNewStoreDir, openStore, positionals, storeDir, withStore } from '../store-arg.ts';
import { deleteJson, summaryNote } from './admin.ts';
import {
  applySettings,
  nowFlag,
  SETTINGS_HELP,
  SETTINGS_OPTIONS,
  settingsPatch,
  tagsListFlag,
} from './memory-flags.ts';

const COMMON = { store: { type: 'string' }, json: { type: 'boolean' }, now: { type: 'string' } } as const;
const STORE_HELP = 'The store is --store DIR, else $RLM_STORE.\n';
const NOW_HELP = '  --now D                      the time to compute weights at (ISO date or time) [now]\n';

const REMEMBER_HELP = `usage: rlm remember TEXT|- --store DIR [--topic T] [--importance I] [--tags a,b] [--json]

Stores a memory (a decision, preference or fact) in the store; '-' reads TEXT from stdin (the line
ends it ends with left out). It is searchable at once by recall, search, grep and rlm answer. Prints
its id; --json prints {id, topic, importance}, plus consolidated: {summary, text, archived} when
automatic consolidation ran, or consolidationError: {code, message} when it failed (the memory is
stored all the same: exit 0).
${STORE_HELP}
  --topic T                    what it is about, at most 200 characters [general]
  --importance I               critical, high, medium or low [medium]; sets how fast it decays
  --tags a,b                   tags, to filter recall and search
  --source S                   cli, hook (or mcp, consolidation) [cli]
  --create                     allow making a store in a folder that already holds other files
  --now D                      when the memory was made, and the time weights are computed at (ISO
                               date or time) [now]
${SETTINGS_HELP}`;

export async function remember(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    ...COMMON,
    ...SETTINGS_OPTIONS,
    topic: { type: 'string' },
    importance: { type: 'string' },
    tags: { type: 'string' },
    source: { type: 'string' },
    create: { type: 'boolean' },
  });
  if (values.help) return help(io, REMEMBER_HELP);
  let [text] = positionals(pos, ['TEXT'], 'remember');
  // `echo TEXT | rlm remember -` ends the text with echo's line end, which is no part of the memory.
  if (text === '-') text = (await readStdin(io)).replace(/[\r\n]+$/, '');
  const now = nowFlag(values.now);
  const patch = settingsPatch(values, io.cwd);
  const tags = tagsListFlag(values.tags);
  const input = {
    text: text!,
    now,
    ...(values.topic !== undefined ? { topic: values.topic } : {}),
    ...(values.importance !== undefined ? { importance: values.importance } : {}),
    ...(tags ? { tags } : {}),
    source: values.source ?? 'cli',
  };
  // Checked before the store opens: bad input writes nothing, not even settings.
  checkRemember(input);
  checkNewStoreDir(storeDir(values.store, io), values.create);
  return withStore(values.store, io, {}, async (store) => {
    await applySettings(store, patch, io);
    const m = await store.remember(input);
    const after = await consolidateAfterRemember(store, m.topic, { env: io.env, now });
    if (values.json) writeJson(io, { id: m.id, topic: m.topic, importance: m.importance, ...after });
    else {
      io.stdout.write(`${m.id}\n`);
      io.stderr.write(`rlm: remembered in topic "${shown(io.stderr, m.topic, true)}" (${m.importance})\n`);
      if ('consolidated' in after)
        io.stderr.write(
          `rlm: consolidated "${shown(io.stderr, m.topic, true)}" into ${after.consolidated.summary} (${plural(after.consolidated.archived.length, 'memory', 'memories')} archived)\n`,
        );
    }
    // Kept all the same: the memory is stored, and the next remember of the topic tries again.
    if ('consolidationError' in after)
      io.stderr.write(
        `rlm: warning: automatic consolidation of "${shown(io.stderr, m.topic, true)}" failed, the memory is stored: ${shown(io.stderr, after.consolidationError.message, true)} [${after.consolidationError.code}] (change it with --auto-consolidate SPEC|off)\n`,
      );
    return EXIT_OK;
  });
}

const RECALL_HELP = `usage: rlm recall QUERY --store DIR [--topic T] [--tags a,b] [-k N] [--since D] [--until D] [--archived] [--json]

Finds memories, ranked by relevance × weight × recency (see README, "Memories"). Without an embedder,
relevance is word matching (BM25: stemmed English and French words, typos forgiven), so "which language
for replies" does not find "answers in French"; with one it is by meaning too. To turn one on for a store:
  rlm repair --store DIR --embedder ollama:nomic-embed-text    (a local Ollama; or http://HOST/v1#MODEL)
Each memory returned counts as an access: its weight is refreshed and reinforced. --store falls back to
$RLM_STORE.
--json prints {results:[{id, score, text, topic, importance, weight, created, tags, archived}]}.
  -k N                         number of results [10]
  --topic T, --tags a,b        only memories of this topic / with all these tags
  --since D, --until D         created in this window (ISO date, or Nd for N days before --now)
  --archived                   include archived memories
${NOW_HELP}`;

export async function recall(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    ...COMMON,
    topic: { type: 'string' },
    tags: { type: 'string' },
    k: { type: 'string', short: 'k' },
    since: { type: 'string' },
    until: { type: 'string' },
    archived: { type: 'boolean' },
  });
  if (values.help) return help(io, RECALL_HELP);
  const [query] = positionals(pos, ['QUERY'], 'recall');
  const now = nowFlag(values.now);
  const k = intFlag(values.k, '-k', 1);
  const tags = tagsListFlag(values.tags);
  const store = await openStore(values.store, io);
  try {
    const hits = await store.recall(query!, {
      now,
      ...(k !== undefined ? { k } : {}),
      ...(values.topic !== undefined ? { topic: values.topic } : {}),
      ...(tags ? { tags } : {}),
      ...(values.since !== undefined ? { since: parseWhen(values.since, '--since', now) } : {}),
      ...(values.until !== undefined ? { until: parseWhen(values.until, '--until', now) } : {}),
      ...(values.archived ? { archived: true } : {}),
    });
    const { results } = recallResults(hits);
    if (values.json) writeJson(io, { results });
    else {
      for (const r of results) {
        const flags = `${shown(io.stdout, r.topic, true)}, ${r.importance}, weight ${r.weight.toFixed(2)}, ${r.created.slice(0, 10)}${r.archived ? ', archived' : ''}`;
        io.stdout.write(
          `${r.id}  ${r.score.toFixed(3)}  [${flags}]\n  ${shown(io.stdout, r.text.replace(/\s+/g, ' ').slice(0, 300), true)}\n`,
        );
      }
      if (results.length === 0) io.stderr.write('rlm: no memory matches\n');
    }
    if (results.length === 0 && store.embedder === null) {
      io.stderr.write(
        'rlm: recall matches words: this store has no embedder to match meaning (see rlm recall --help)\n',
      );
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const FORGET_HELP = `usage: rlm forget ID... --store DIR [--json]

Deletes memories for good, with every link to or from them (use decay/archive to keep them instead);
their text leaves every file of the store. A consolidation summary written from a forgotten memory may
repeat it, so it is deleted too, and its other sources come back from the archive (as do the sources
of a summary forgotten by its ID). An unknown ID fails the command and nothing is deleted. --json
prints {forgotten, ids, summaries, restored}.
${STORE_HELP}`;

export async function forget(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: ids } = parseCommandArgs(argv, { store: COMMON.store, json: COMMON.json });
  if (values.help) return help(io, FORGET_HELP);
  if (ids.length === 0) throw new RlmError('BAD_INPUT', 'forget: missing ID (rlm forget --help)');
  const store = await openStore(values.store, io);
  try {
    const r = await store.deleteDocuments(ids, { memoriesOnly: true });
    const json = deleteJson(r);
    if (values.json) writeJson(io, { forgotten: json.ids.length, ...json });
    else
      io.stderr.write(
        `rlm: forgot ${plural(r.deleted.length, 'memory', 'memories')}\n${summaryNote(r, io.stderr)}`,
      );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const RESTORE_HELP = `usage: rlm restore ID... --store DIR [--json]

Brings archived memories back into recall and search; restoring counts as an access. An unknown ID
fails the command and nothing changes; a memory that was not archived is said to be so. --json prints
{restored:[ids], notArchived:[ids]}: the memories brought back, and those that were not archived.
${STORE_HELP}${NOW_HELP}`;

export async function restore(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: ids } = parseCommandArgs(argv, COMMON);
  if (values.help) return help(io, RESTORE_HELP);
  if (ids.length === 0) throw new RlmError('BAD_INPUT', 'restore: missing ID (rlm restore --help)');
  const now = nowFlag(values.now);
  const store = await openStore(values.store, io);
  try {
    // Archived as restore sees it: put away by decay or consolidation, or faded under the threshold.
    const archived = new Set<string>();
    for (const id of ids) {
      const m = await store.getMemory(id, now);
      if (m?.archived) archived.add(m.id);
    }
    const done = await store.restore(ids, now);
    const restored = done.filter((id) => archived.has(id));
    const notArchived = done.filter((id) => !archived.has(id));
    if (values.json) writeJson(io, { restored, notArchived });
    else {
      io.stderr.write(`rlm: restored ${restored.length}\n`);
      if (notArchived.length > 0)
        io.stderr.write(
          `rlm: ${plural(notArchived.length, 'memory', 'memories')} not archived: ${shown(io.stderr, notArchived.join(', '), true)}\n`,
        );
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const TOPICS_HELP = `usage: rlm topics --store DIR [--json]

Lists memory topics with their active and archived counts. --json prints
{topics:[{topic, memories, archived}]}.
${STORE_HELP}${NOW_HELP}`;

export async function topics(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, COMMON);
  if (values.help) return help(io, TOPICS_HELP);
  const store = await openStore(values.store, io);
  try {
    const list = await store.topics(nowFlag(values.now));
    if (values.json) writeJson(io, { topics: list });
    else
      for (const t of list)
        io.stdout.write(`${shown(io.stdout, t.topic, true)}\t${t.memories}\t${t.archived} archived\n`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const DECAY_HELP = `usage: rlm decay --store DIR [--now D] [--json]

Applies decay: weight = (1 + 0.2·ln(1 + accesses)) · rate^(days since last access · multiplier).
Memories under the prune threshold are archived, never deleted; critical ones never decay. Recall and
topics use the same formula, so running decay is never required for them to be right.
--json prints {decayed, archived, ids}: memories below full weight, memories archived now, their ids.
${STORE_HELP}${NOW_HELP}${SETTINGS_HELP}`;

export async function decay(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...COMMON, ...SETTINGS_OPTIONS });
  if (values.help) return help(io, DECAY_HELP);
  const now = nowFlag(values.now);
  const patch = settingsPatch(values, io.cwd);
  const store = await openStore(values.store, io);
  try {
    await applySettings(store, patch, io);
    const r = await store.decay(now);
    if (values.json) writeJson(io, { decayed: r.decayed, archived: r.archived.length, ids: r.archived });
    else io.stderr.write(`rlm: ${r.decayed} decaying, ${r.archived.length} archived\n`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const CONSOLIDATE_HELP = `usage: rlm consolidate TOPIC --model SPEC --store DIR [--json]

Has the model write one summary of TOPIC's active memories. The summary is a new memory linked to each
source by a 'summarizes' link; the sources are archived, not deleted (critical ones stay active). One
commit: a crash leaves the old state or the new one. Prints the summary's id; --json prints
{summary, text, archived:[ids]}: the summary memory's id, its text, the ids archived.
${STORE_HELP}--model SPEC is ${MODEL_SPECS}.
${NOW_HELP}${SETTINGS_HELP}`;

export async function consolidate(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    ...COMMON,
    ...SETTINGS_OPTIONS,
    model: { type: 'string' },
  });
  if (values.help) return help(io, CONSOLIDATE_HELP);
  const [topic] = positionals(pos, ['TOPIC'], 'consolidate');
  if (!values.model) throw new RlmError('BAD_INPUT', 'consolidate: --model SPEC is required');
  const model = createModel(values.model, { env: io.env });
  const now = nowFlag(values.now);
  const patch = settingsPatch(values, io.cwd);
  const store = await openStore(values.store, io);
  try {
    await applySettings(store, patch, io);
    const r = await store.consolidate(topic!, modelSummarizer(model), { now });
    if (values.json) writeJson(io, r);
    else {
      io.stdout.write(`${r.summary}\n`);
      io.stderr.write(
        `rlm: ${plural(r.archived.length, 'memory', 'memories')} of "${shown(io.stderr, topic!, true)}" archived under ${r.summary}\n`,
      );
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

function help(io: CliIO, text: string): number {
  io.stdout.write(text);
  return EXIT_OK;
}
