/**
 * `rlm claude ingest`: imports Claude Code sessions into a store, incrementally. Each session file is kept
 * as parts (see reader.ts) whose records say which bytes they cover, so a second import skips unchanged
 * files, reads only the new bytes of a grown one, and re-imports a file that was rewritten. Everything
 * is decided and written under the store's write lock, in commits of whole parts.
 */
import { promises as fs } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Store } from '../../memory/store-api.ts';
import type { DocumentRecord, ImportItem } from '../../memory/types.ts';
import {
  assertSessionFile,
  decodeFolderName,
  type FoundSession,
  findSessions,
  type Note,
  sessionAt,
  sniff,
  subagentRuns,
} from './files.ts';
import { HEAD_BYTES, headHash, type ResumePoint, readSessionParts } from './reader.ts';

export interface ClaudeImportOptions {
  /** The projects folder to scan (`~/.claude/projects`). Ignored when `sessions` is given. */
  projectsDir?: string;
  /**
   * Import only these session files, each main session with its subagent runs. Each must be a Claude Code
   * session (see assertSessionFile); the first that is not stops the import before anything is written.
   */
  sessions?: string[];
  /** Rendered characters per part (default 4 MiB). */
  partChars?: number;
  /** Text per commit (default: the store's). */
  segmentChars?: number;
  signal?: AbortSignal;
  /** Called before each session file: files done, files in all, and the file about to be read. */
  onProgress?: (done: number, total: number, file: string) => void;
}

/** What an import did. `documents`, `chunks` and `tokens` are the store's totals afterwards. */
export interface ClaudeImportReport {
  /** Session files looked at. */
  files: number;
  /** Files with new lines imported (new, grown or rewritten). */
  imported: number;
  /** Files skipped because they did not change. */
  unchanged: number;
  /** Files whose start changed (rewritten), imported again from scratch. */
  rewritten: number;
  /** Exchanges (user messages with their replies) added. */
  exchanges: number;
  documents: number;
  chunks: number;
  tokens: number;
  notes: Note[];
  elapsedMs: number;
}

/** Parts of one file as stored, by byte order. */
interface Stored {
  parts: DocumentRecord[];
  to: number;
  lines: number;
  exchanges: number;
  project: string;
  session: string;
  head?: string;
  headBytes: number;
}

/** Imports the sessions of `opts.projectsDir` (or the files `opts.sessions`) into `store`. */
export async function importClaude(store: Store, opts: ClaudeImportOptions): Promise<ClaudeImportReport> {
  const started = performance.now();
  const notes: Note[] = [];
  const found: FoundSession[] = [];
  if (opts.sessions) {
    const seen = new Set<string>();
    const take = (s: FoundSession) => {
      if (seen.has(s.file)) return;
      seen.add(s.file);
      found.push(s);
    };
    for (const f of opts.sessions) {
      const s = await sessionAt(f, undefined, notes);
      if (!s) continue;
      await assertSessionFile(s.file);
      take(s);
      // A full import finds a session's subagent runs beside it; one session imported alone must bring
      // them too, or the hooks (which import one session) would store sessions without them.
      if (s.agent === undefined) for (const run of await subagentRuns(s, notes)) take(run);
    }
  } else if (opts.projectsDir) {
    found.push(...(await findSessions(resolve(opts.projectsDir), notes)));
  }
  const report: ClaudeImportReport = {
    files: found.length,
    imported: 0,
    unchanged: 0,
    rewritten: 0,
    exchanges: 0,
    documents: 0,
    chunks: 0,
    tokens: 0,
    notes,
    elapsedMs: 0,
  };
  const result = await store.importDocuments((docs) => plan(found, storedParts(docs), report, opts), {
    ...(opts.segmentChars !== undefined ? { segmentChars: opts.segmentChars } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return {
    ...report,
    documents: result.documents,
    chunks: result.chunks,
    tokens: result.tokens,
    elapsedMs: Math.round(performance.now() - started),
  };
}

async function* plan(
  found: FoundSession[],
  stored: Map<string, Stored>,
  report: ClaudeImportReport,
  opts: ClaudeImportOptions,
): AsyncGenerator<ImportItem> {
  // A folder's real path, from any session of it that records one (stored or sniffed below).
  const folderCwd = new Map<string, string>();
  const known = new Map<string, { cwd?: string; session?: string }>();
  for (const f of found) {
    const s = stored.get(f.file);
    if (s) folderCwd.set(f.folder, s.project);
  }
  // A file in the projects folder that holds no session record (empty, or not Claude Code's) is no
  // session: --session and the hooks refuse one, and a folder's import leaves it out with a note.
  const notSessions = new Set<string>();
  for (const f of found) {
    if (stored.has(f.file)) continue;
    if (!(await isSessionFile(f.file))) {
      notSessions.add(f.file);
      report.notes.push({
        path: f.file,
        note: 'not a Claude Code session (no line is a session record); skipped',
      });
      continue;
    }
    const head: { cwd?: string; session?: string } = await sniff(f.file).catch(() => ({}));
    known.set(f.file, head);
    if (head.cwd && !folderCwd.has(f.folder)) folderCwd.set(f.folder, head.cwd);
  }
  report.files -= notSessions.size;
  for (const [i, f] of found.entries()) {
    opts.onProgress?.(i, found.length, f.file);
    if (notSessions.has(f.file)) continue;
    try {
      yield* importFile(f, stored.get(f.file), known.get(f.file), folderCwd, report, opts);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      report.notes.push({ path: f.file, note: `unreadable: ${code}; skipped` });
    }
  }
}

/** The import steps of one file: nothing when unchanged, its new parts when grown, all of it when rewritten. */
async function* importFile(
  f: FoundSession,
  prior: Stored | undefined,
  sniffed: { cwd?: string; session?: string } | undefined,
  folderCwd: Map<string, string>,
  report: ClaudeImportReport,
  opts: ClaudeImportOptions,
): AsyncGenerator<ImportItem> {
  let resume: ResumePoint = { from: 0, lines: 0, exchanges: 0 };
  let drop: string[] = [];
  if (prior) {
    if (f.size === prior.to) {
      report.unchanged++;
      return;
    }
    if (f.size > prior.to && (await headOf(f.file, prior.headBytes)) === prior.head) {
      resume = { from: prior.to, lines: prior.lines, exchanges: prior.exchanges };
    } else {
      drop = prior.parts.map((p) => p.id);
      report.rewritten++;
    }
  }
  const head: { cwd?: string; session?: string } = sniffed ?? (drop.length > 0 ? await sniff(f.file) : {});
  const project =
    (resume.from > 0 ? prior?.project : undefined) ??
    head.cwd ??
    folderCwd.get(f.folder) ??
    decodeFolderName(basename(f.folder));
  const session = head.session ?? (resume.from > 0 ? prior?.session : undefined) ?? f.session ?? f.file;
  const headBytes = Math.min(HEAD_BYTES, f.size);
  const headStamp =
    resume.from > 0
      ? { head: prior!.head!, headBytes: prior!.headBytes }
      : { head: await headOf(f.file, headBytes), headBytes };
  let added = 0;
  const parts = readSessionParts(
    { file: f.file, session, project, ...(f.agent ? { agent: f.agent } : {}) },
    resume,
    {
      ...(opts.partChars !== undefined ? { partChars: opts.partChars } : {}),
      onNote: (note) => report.notes.push({ path: f.file, note }),
    },
  );
  for await (const doc of parts) {
    doc.meta = { ...doc.meta, ...headStamp };
    report.exchanges += Number(doc.meta.exchanges ?? 0);
    added++;
    yield { add: doc, ...(drop.length > 0 ? { drop } : {}) };
    drop = [];
  }
  if (drop.length > 0) yield { drop };
  if (added > 0) report.imported++;
  else if (!prior) report.unchanged++;
}

/** The stored parts of every imported session file. */
function storedParts(docs: DocumentRecord[]): Map<string, Stored> {
  const byFile = new Map<string, DocumentRecord[]>();
  for (const d of docs) {
    const m = d.meta;
    if (m?.source !== 'claude-code' || typeof m.file !== 'string') continue;
    const list = byFile.get(m.file);
    if (list) list.push(d);
    else byFile.set(m.file, [d]);
  }
  const out = new Map<string, Stored>();
  for (const [file, parts] of byFile) {
    parts.sort((a, b) => Number(a.meta!.from) - Number(b.meta!.from));
    const last = parts.at(-1)!.meta!;
    const first = parts[0]!.meta!;
    out.set(file, {
      parts,
      to: Number(last.to),
      lines: Number(last.lines),
      exchanges: parts.reduce((n, p) => n + Number(p.meta!.exchanges ?? 0), 0),
      project: String(first.project),
      session: String(first.session),
      ...(typeof first.head === 'string' ? { head: first.head } : {}),
      headBytes: Number(first.headBytes ?? 0),
    });
  }
  return out;
}

async function headOf(file: string, bytes: number): Promise<string> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return headHash(buf.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

/** Whether `file` holds a session record; an unreadable file is left to the import, which notes why. */
async function isSessionFile(file: string): Promise<boolean> {
  try {
    await assertSessionFile(file);
    return true;
  } catch (err) {
    return !/is not a Claude Code session file/.test((err as Error).message);
  }
}
