/**
 * Generated Claude Code session files (the parts of the format rlm reads: docs/claude-code-sessions.md):
 * user and assistant lines with tool calls and results, progress and queue noise, summaries. Used by the
 * `claude` benchmark and by the tests of `rlm claude`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from './rng.ts';

interface ExchangeSpec {
  user: string;
  assistant: string;
  /** ISO time of the user message; the reply comes a few seconds later. */
  time: string;
  /** Add a tool call and its (large) result between question and answer. */
  tool?: { name: string; command: string; output: string };
}

export interface SessionSpec {
  session: string;
  cwd?: string;
  branch?: string;
  model?: string;
  summary?: string;
  exchanges: ExchangeSpec[];
  /** Add progress and queue-operation lines (noise). */
  noise?: boolean;
}

let uuidCounter = 0;
const uuid = () => `u-${(++uuidCounter).toString(16).padStart(8, '0')}`;

function later(time: string, seconds: number): string {
  return new Date(Date.parse(time) + seconds * 1000).toISOString();
}

/** The JSONL lines of one session, in Claude Code's shape. */
export function sessionLines(spec: SessionSpec): string[] {
  const lines: string[] = [];
  const base = {
    sessionId: spec.session,
    version: '2.0.30',
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    ...(spec.branch ? { gitBranch: spec.branch } : {}),
  };
  if (spec.summary)
    lines.push(JSON.stringify({ type: 'summary', summary: spec.summary, leafUuid: 'leaf-1' }));
  let parent: string | null = null;
  for (const ex of spec.exchanges) {
    const u = uuid();
    lines.push(
      JSON.stringify({
        ...base,
        type: 'user',
        uuid: u,
        parentUuid: parent,
        timestamp: ex.time,
        message: { role: 'user', content: ex.user },
      }),
    );
    parent = u;
    if (spec.noise) {
      lines.push(
        JSON.stringify({
          type: 'progress',
          data: { type: 'hook_progress', hookEvent: 'UserPromptSubmit' },
          toolUseID: 't',
          timestamp: ex.time,
        }),
        JSON.stringify({ type: 'queue-operation', operation: 'enqueue', timestamp: ex.time }),
      );
    }
    if (ex.tool) {
      const a = uuid();
      lines.push(
        JSON.stringify({
          ...base,
          type: 'assistant',
          uuid: a,
          parentUuid: parent,
          timestamp: later(ex.time, 2),
          message: {
            role: 'assistant',
            model: spec.model ?? 'claude-sonnet-4-5',
            content: [
              { type: 'thinking', thinking: 'Let me look.' },
              { type: 'tool_use', id: `toolu-${a}`, name: ex.tool.name, input: { command: ex.tool.command } },
            ],
          },
        }),
        JSON.stringify({
          ...base,
          type: 'user',
          uuid: uuid(),
          parentUuid: a,
          timestamp: later(ex.time, 3),
          message: {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: `toolu-${a}`, content: ex.tool.output }],
          },
        }),
      );
    }
    const r = uuid();
    lines.push(
      JSON.stringify({
        ...base,
        type: 'assistant',
        uuid: r,
        parentUuid: parent,
        timestamp: later(ex.time, 5),
        message: {
          role: 'assistant',
          model: spec.model ?? 'claude-sonnet-4-5',
          content: [{ type: 'text', text: ex.assistant }],
          usage: { input_tokens: 100, output_tokens: 50 },
        },
      }),
    );
    parent = r;
  }
  return lines;
}

/** One session file's text (every line ends with a newline). */
export function sessionText(spec: SessionSpec): string {
  return sessionLines(spec)
    .map((l) => `${l}\n`)
    .join('');
}

/** The folder name Claude Code uses for a project path. */
export function encodeProject(path: string): string {
  return path.replace(/[/.]/g, '-');
}

/** Writes a session under `projects/<encoded cwd>/<session>.jsonl` and returns its path. */
export function writeSession(projects: string, folderPath: string, spec: SessionSpec): string {
  const dir = join(projects, encodeProject(folderPath));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${spec.session}.jsonl`);
  writeFileSync(file, sessionText(spec));
  return file;
}

const TOPICS: [string, string][] = [
  ['flaky login test', 'the login test raced the session cookie; awaiting the redirect fixed it'],
  ['slow build', 'the build re-ran type checking twice; caching tsc output cut it in half'],
  ['memory leak in the worker', 'listeners were never removed; a finally block now detaches them'],
  ['database migration', 'the migration lacked an index; adding it made the query fast again'],
  ['CSS layout on mobile', 'a fixed width overflowed; a flex-wrap rule solved it'],
  ['deploy pipeline', 'the deploy step used a stale token; rotating it in the vault fixed it'],
  ['timezone bug in reports', 'dates were parsed as local time; parsing them as UTC fixed the report'],
  ['rate limiting', 'requests were retried without backoff; exponential backoff stopped the 429s'],
];
const WORDS =
  'module function request response cache index query server client handler config option value error retry queue token stream buffer parser schema'.split(
    ' ',
  );

/**
 * A tree of `sessions` generated sessions over `projects` projects, about `bytesPerSession` bytes each
 * (most of it in tool output, as in real sessions). Returns the projects folder and the total bytes.
 */
export function generateTree(
  root: string,
  opts: { projects: number; sessions: number; bytesPerSession: number; seed?: number },
): { projectsDir: string; bytes: number } {
  const rng = new Rng(opts.seed ?? 7);
  const pick = (n: number) => rng.int(0, n - 1);
  const projectsDir = join(root, 'projects');
  let bytes = 0;
  for (let s = 0; s < opts.sessions; s++) {
    const p = s % opts.projects;
    const cwd = `/home/dev/work/app-${p}-service`;
    const start = Date.UTC(2026, 0, 1) + s * 3_600_000;
    const exchanges: ExchangeSpec[] = [];
    let size = 0;
    let i = 0;
    while (size < opts.bytesPerSession) {
      const [topic, fix] = TOPICS[pick(TOPICS.length)]!;
      const filler = Array.from({ length: 40 }, () => WORDS[pick(WORDS.length)]).join(' ');
      const output = Array.from({ length: 60 }, () => `${filler} ${pick(1e6)}`).join('\n');
      const ex: ExchangeSpec = {
        user: `Can you look at the ${topic} in session ${s}? ${filler}`,
        assistant: `I found it: ${fix}. ${filler}`,
        time: new Date(start + i * 60_000).toISOString(),
        tool: { name: 'Bash', command: `npm test -- ${topic.replace(/\s+/g, '-')}`, output },
      };
      size += ex.user.length + ex.assistant.length + output.length + 1500;
      exchanges.push(ex);
      i++;
    }
    const text = sessionText({
      session: `sess-${String(s).padStart(5, '0')}`,
      cwd,
      branch: `feature-${s % 5}`,
      exchanges,
      noise: true,
    });
    const dir = join(projectsDir, encodeProject(cwd));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `sess-${String(s).padStart(5, '0')}.jsonl`), text);
    bytes += Buffer.byteLength(text);
  }
  return { projectsDir, bytes };
}
