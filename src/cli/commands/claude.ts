/**
 * `rlm claude ...`: Claude Code history as context. `ingest` imports session files into a store;
 * `projects`, `timeline` and `recall` read it back; `forget` drops a project; `hooks` keeps it current.
 */

import { existsSync } from 'node:fs';
import path from 'node:path';
import { readEnv } from '../../../core/env.ts';
import { RlmError } from '../../../core/errors.ts';
import { plural } from '../../../core/plural.ts';
import { type HistoryFilter, listProjects, recall, sessionTexts, timeline } from '../../claude/catalog.ts';
import { DEFAULT_CONTEXT_TOKENS } from '../../claude/context.ts';
import { type ClaudeImportReport, importClaude } from '../../claude/import.ts';
import { MODEL_SPECS } from '../../runtime/providers/specs.ts';
import { roundScore } from '../../shapes.ts';
import { intFlag, parseCommandArgs } from '../args.ts';
import { type CliIO, EXIT_OK, EXIT_USAGE, shown, writeJson } from '../io.ts';
import { ProgressBar } from '../progress.ts';
import { openStore, positionals, storeDir, withStore } from '../store-arg.ts';

const HELP = `usage: rlm claude <command> [options] --store DIR

Claude Code history as context. Everything stays on this machine: sessions are read from disk into the
store folder you name, and nothing is sent anywhere (except the question and sessions you pass to a model
with recall --answer).

commands:
  ingest [--dir DIR] [--session FILE]...   import sessions (default: $CLAUDE_CONFIG_DIR/projects, else
                                           ~/.claude/projects); --session imports one with its
                                           subagent runs; unchanged sessions are skipped, grown ones
                                           add only their new exchanges; --hook is the form the
                                           hooks run (session path read from stdin, only from the
                                           projects folder; import in the background, silent,
                                           errors to --log FILE)
  projects                                 projects: real path, sessions, exchanges, first/last activity
  timeline [--project P] [--since D] [--until D]
                                           sessions in time order: title, start, end, exchanges
  recall QUERY [--project P] [--since D] [--until D] [-k N] [--answer --model SPEC]
                                           the best exchanges across sessions; --answer runs rlm answer
                                           over the sessions they come from
                                           (SPEC: ${MODEL_SPECS})
  forget --project P                       delete a project's sessions from the store
  context [--project DIR] [--max-tokens N] what rlm remembers about a project (its memories and recent
                                           sessions), the text a session starts with, within N tokens
                                           (default $RLM_CONTEXT_TOKENS, else ${DEFAULT_CONTEXT_TOKENS}); --hook is the
                                           form the plugin's SessionStart hook runs
  hooks install|remove [--settings FILE]   add/remove SessionEnd and PreCompact hooks that run
                                           rlm claude ingest (default settings: ~/.claude/settings.json)

--json output: ingest {files, imported, unchanged, rewritten, exchanges, documents, chunks, tokens, notes,
elapsedMs}; projects {projects:[{project, sessions, exchanges, first, last}]}; timeline {sessions:[{session,
project, title, start, end, exchanges, subagents}]}; recall {results:[{id, score, session, project, time,
branch, model, agent, text}]} (with --answer: the rlm answer --json object, plus sessions); forget {projects, sessions, documents}; context {project, memories, sessions, tokens, text}.

--store DIR (or $RLM_STORE) names the store; --json prints data as JSON. P is a project's path or its
last segments (\`my-app\`); D is an ISO date or time (a bare date covers its whole day).
`;

const SUBCOMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  ingest,
  projects,
  timeline: timelineCommand,
  recall: recallCommand,
  forget,
  hooks: async (argv, io) => (await import('./claude-hooks.ts')).hooks(argv, io),
  context: async (argv, io) => (await import('./claude-context.ts')).context(argv, io),
};

export default async function claude(argv: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = argv;
  // No subcommand is a usage error, its usage the diagnostic (on stderr); asked for, the usage is data.
  if (sub === undefined) {
    io.stderr.write(HELP);
    return EXIT_USAGE;
  }
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout.write(HELP);
    return EXIT_OK;
  }
  const run = SUBCOMMANDS[sub];
  if (!run) throw new RlmError('BAD_INPUT', `claude: unknown command '${sub}' (rlm claude --help)`);
  return run(rest, io);
}

const filterFlags = {
  project: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
} as const;

function filterOf(values: { project?: string; since?: string; until?: string }): HistoryFilter {
  return {
    ...(values.project !== undefined ? { project: values.project } : {}),
    ...(values.since !== undefined ? { since: values.since } : {}),
    ...(values.until !== undefined ? { until: values.until } : {}),
  };
}

async function ingest(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    dir: { type: 'string' },
    session: { type: 'string', multiple: true },
    hook: { type: 'boolean' },
    log: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io);
  positionals(pos, [], 'claude ingest');
  if (values.hook) {
    // Run by Claude Code: silent, instant, never failing. The import itself runs in the background.
    // A Claude Code that rlm runs as a model has nothing worth importing (and keeps no session file).
    if (readEnv(io.env).modelCall) return EXIT_OK;
    const log = path.resolve(
      io.cwd,
      values.log ?? path.join(readEnv(io.env).claudeConfigDir, 'rlm-hook.log'),
    );
    const { startHookImport } = await import('../../claude/hook-run.ts');
    const projects = path.join(readEnv(io.env).claudeConfigDir, 'projects');
    await startHookImport(io.stdin, storeDir(values.store, io), log, io.cwd, projects);
    return EXIT_OK;
  }
  if (values.dir !== undefined && values.session !== undefined)
    throw new RlmError('BAD_INPUT', 'claude ingest: give --dir or --session, not both');
  for (const s of values.session ?? [])
    if (!existsSync(path.resolve(io.cwd, s)))
      throw new RlmError('BAD_INPUT', `--session: no such file: ${path.resolve(io.cwd, s)}`);
  const bar = new ProgressBar(io.stderr);
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  let report: ClaudeImportReport;
  try {
    report = await withStore(values.store, io, {}, (store) =>
      importClaude(store, {
        ...(values.session
          ? { sessions: values.session.map((s) => path.resolve(io.cwd, s)) }
          : {
              projectsDir: path.resolve(
                io.cwd,
                values.dir ?? path.join(readEnv(io.env).claudeConfigDir, 'projects'),
              ),
            }),
        signal: controller.signal,
        onProgress: (done, total, file) =>
          bar.update(
            done,
            total,
            `${done}/${total} ${total === 1 ? 'session' : 'sessions'} ${path.basename(file)}`,
          ),
      }),
    );
  } finally {
    bar.done();
    process.off('SIGINT', onSignal);
  }
  for (const n of report.notes)
    io.stderr.write(`rlm: note: ${shown(io.stderr, `${n.path}: ${n.note}`, true)}\n`);
  if (values.json) writeJson(io, report);
  else
    io.stdout.write(
      `${plural(report.files, 'session file')}: ${report.imported} imported (${report.exchanges} new ${report.exchanges === 1 ? 'exchange' : 'exchanges'}), ` +
        `${report.unchanged} unchanged${report.rewritten ? `, ${report.rewritten} rewritten` : ''}; ` +
        `store: ${plural(report.documents, 'document')}, ${plural(report.chunks, 'chunk')}, ${plural(report.tokens, 'token')} (${report.elapsedMs} ms)\n`,
    );
  return EXIT_OK;
}

async function projects(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io);
  positionals(pos, [], 'claude projects');
  const store = await openStore(values.store, io);
  try {
    const list = await listProjects(store);
    if (values.json) writeJson(io, { projects: list });
    else if (list.length === 0)
      io.stderr.write('no Claude Code sessions imported (rlm claude ingest --store DIR)\n');
    else
      for (const p of list)
        io.stdout.write(
          `${shown(io.stdout, p.project, true)}  ${plural(p.sessions, 'session')}  ${plural(p.exchanges, 'exchange')}  ${day(p.first)} → ${day(p.last)}\n`,
        );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function timelineCommand(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    ...filterFlags,
    json: { type: 'boolean' },
  });
  if (values.help) return help(io);
  positionals(pos, [], 'claude timeline');
  const store = await openStore(values.store, io);
  try {
    const sessions = await timeline(store, filterOf(values));
    if (values.json) writeJson(io, { sessions });
    else if (sessions.length === 0) io.stderr.write('no sessions\n');
    else
      for (const s of sessions)
        io.stdout.write(
          `${minute(s.start)} → ${minute(s.end)}  ${plural(s.exchanges, 'exchange')}  ${shown(io.stdout, `${s.project}  ${s.title}`, true)}\n`,
        );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function recallCommand(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    ...filterFlags,
    k: { type: 'string', short: 'k' },
    answer: { type: 'boolean' },
    model: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io);
  const [query] = positionals(pos, ['QUERY'], 'claude recall');
  const k = intFlag(values.k, '-k', 1) ?? 10;
  const spec = values.model ?? readEnv(io.env).model;
  if (values.answer && !spec)
    throw new RlmError('BAD_INPUT', 'claude recall --answer needs a model: --model SPEC or RLM_MODEL');
  const store = await openStore(values.store, io);
  try {
    const found = await recall(store, query!, { ...filterOf(values), k });
    if (values.answer) {
      const { answerOverSessions } = await import('../../claude/answer.ts');
      const result = await answerOverSessions(
        query!,
        await sessionTexts(store, found.sessions),
        spec!,
        io.env,
      );
      if (values.json) writeJson(io, result);
      else {
        const answer = shown(io.stdout, result.answer);
        io.stdout.write(answer.endsWith('\n') ? answer : `${answer}\n`);
        io.stderr.write(`rlm: ${result.status} over ${plural(result.sessions.length, 'session')}\n`);
      }
      return result.status === 'final' ? EXIT_OK : 1;
    }
    const results = found.results.map((r) => ({ ...r, score: roundScore(r.score) }));
    if (values.json) writeJson(io, { results });
    else if (results.length === 0) io.stderr.write('no results\n');
    else
      for (const r of results)
        io.stdout.write(
          `── ${minute(r.time)}  ${shown(io.stdout, `${r.project}  session ${r.session}${r.agent ? ` (subagent ${r.agent})` : ''}`, true)}  ${r.score}\n${shown(io.stdout, r.text)}\n\n`,
        );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function forget(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals: pos } = parseCommandArgs(argv, {
    store: { type: 'string' },
    project: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) return help(io);
  positionals(pos, [], 'claude forget');
  if (values.project === undefined) throw new RlmError('BAD_INPUT', 'claude forget: --project P is required');
  const store = await openStore(values.store, io);
  try {
    const { forgetProject } = await import('../../claude/forget.ts');
    const r = await forgetProject(store, values.project);
    if (values.json) writeJson(io, r);
    else
      io.stdout.write(
        `forgot ${plural(r.sessions, 'session')} of ${shown(io.stdout, r.projects.join(', '), true)}\n`,
      );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

function day(iso: string | null): string {
  return iso === null ? '?' : iso.slice(0, 10);
}
function minute(iso: string | null): string {
  return iso === null ? '?' : iso.slice(0, 16).replace('T', ' ');
}

function help(io: CliIO): number {
  io.stdout.write(HELP);
  return EXIT_OK;
}
