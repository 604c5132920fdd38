/**
 * Finding Claude Code session files: `PROJECTS/<encoded-path>/<session>.jsonl`, and subagent runs in
 * `subagents/agent-<id>.jsonl` (beside the sessions or under `<session>/subagents/`). Also what the
 * first lines of a file say about it (the working directory and session id), and whether it is a
 * session at all.
 */
import { type Dirent, promises as fs } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { RlmError } from '../../core/errors.ts';
import { linkFence } from '../../memory/ingest/link-fence.ts';
import { readLines } from './lines.ts';

/** A session file found on disk. */
export interface FoundSession {
  file: string;
  /** The project folder (`PROJECTS/<encoded-path>`). */
  folder: string;
  /** Session id from the file name (the parent session folder for a subagent run), if it has one. */
  session?: string;
  agent?: string;
  size: number;
}

export interface Note {
  path: string;
  note: string;
}

/** Session files under a projects folder, sorted by path; unreadable folders become notes. */
export async function findSessions(root: string, notes: Note[]): Promise<FoundSession[]> {
  const out: FoundSession[] = [];
  let projects: Dirent[];
  try {
    projects = await fs.readdir(root, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    notes.push({
      path: root,
      note:
        code === 'ENOENT' ? 'no Claude Code projects folder here; nothing to import' : `unreadable: ${code}`,
    });
    return out;
  }
  // A session file that is a symlink is read only when it leads inside the projects folder, as ingest's
  // walk does: a link to ~/.ssh/id_rsa.jsonl must not reach the store, nor a model after it.
  const fence = linkFence([await fs.realpath(root)], false);
  for (const p of projects.sort(byName)) {
    if (!p.isDirectory()) continue;
    const folder = join(root, p.name);
    await walk(folder, folder, 0, out, notes, fence);
  }
  if (out.length === 0 && notes.length === 0) notes.push({ path: root, note: 'no session files found' });
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

async function walk(
  dir: string,
  folder: string,
  depth: number,
  out: FoundSession[],
  notes: Note[],
  fence: Fence,
) {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    notes.push({ path: dir, note: `unreadable: ${(err as NodeJS.ErrnoException).code}` });
    return;
  }
  for (const e of entries.sort(byName)) {
    const full = join(dir, e.name);
    if (e.isDirectory()) {
      // <session>/subagents/… and <session>/session-memory/… are the deepest Claude Code goes.
      if (depth < 2) await walk(full, folder, depth + 1, out, notes, fence);
    } else {
      const found = await sessionEntry(full, e, folder, notes, fence);
      if (found) out.push(found);
    }
  }
}

type Fence = (target: string) => string | null;

/** The session a folder entry holds: a `.jsonl` file, or a symlink to one that stays inside the fence. */
async function sessionEntry(
  full: string,
  e: Dirent,
  folder: string,
  notes: Note[],
  fence: Fence,
): Promise<FoundSession | null> {
  if (!e.name.endsWith('.jsonl') || !(e.isFile() || e.isSymbolicLink())) return null;
  if (e.isSymbolicLink()) {
    // A broken link is left to sessionAt, which says why it cannot be read.
    const target = await fs.realpath(full).catch(() => null);
    const refused = target === null ? null : fence(target);
    if (refused !== null) {
      notes.push({ path: full, note: refused });
      return null;
    }
  }
  return sessionAt(full, folder, notes);
}

/**
 * The subagent runs of the main session `main`, as {@link findSessions} finds them in a full import, so
 * that importing one session (`--session`, the hooks) gives the same documents: every file of
 * `<session>/subagents/`, and the `agent-*.jsonl` beside the sessions or in the project's `subagents/`
 * (older Claude Code) whose first lines name the session. Symlinks are followed only inside the
 * session's project folder.
 */
export async function subagentRuns(main: FoundSession, notes: Note[]): Promise<FoundSession[]> {
  const folder = main.folder;
  const fence = linkFence([await fs.realpath(folder)], false);
  const out: FoundSession[] = [];
  const own = join(dirname(main.file), basename(main.file, '.jsonl'), 'subagents');
  for (const [full, e] of await entriesOf(own, notes)) {
    const found = await sessionEntry(full, e, folder, notes, fence);
    if (found) out.push(found);
  }
  const flat = [
    ...(await entriesOf(folder, notes)).filter(([, e]) => e.name.startsWith('agent-')),
    ...(await entriesOf(join(folder, 'subagents'), notes)),
  ];
  if (flat.length === 0) return out;
  // The import names a run's session by the id its lines record, so the same id decides here.
  const id = (await sniff(main.file).catch(() => ({}) as { session?: string })).session ?? main.session;
  for (const [full, e] of flat) {
    const found = await sessionEntry(full, e, folder, notes, fence);
    if (found?.agent === undefined) continue;
    const head = await sniff(full).catch(() => ({}) as { session?: string });
    if ((head.session ?? found.session) === id) out.push(found);
  }
  return out;
}

/** The entries of `dir` with their paths, by name; none when it does not exist. */
async function entriesOf(dir: string, notes: Note[]): Promise<[string, Dirent][]> {
  try {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    return entries.sort(byName).map((e) => [join(dir, e.name), e]);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Most sessions have no subagent runs: no folder for them is the usual case, not a problem.
    if (code !== 'ENOENT' && code !== 'ENOTDIR') notes.push({ path: dir, note: `unreadable: ${code}` });
    return [];
  }
}

/** Describes one session file (given directly with `--session`, or found by {@link findSessions}). */
export async function sessionAt(
  file: string,
  folder: string | undefined,
  notes: Note[],
): Promise<FoundSession | null> {
  const abs = resolve(file);
  let size: number;
  try {
    const st = await fs.stat(abs);
    if (!st.isFile()) return null;
    size = st.size;
  } catch (err) {
    notes.push({ path: abs, note: `unreadable: ${(err as NodeJS.ErrnoException).code}` });
    return null;
  }
  const name = basename(abs, '.jsonl');
  const parent = dirname(abs);
  // Newer Claude Code writes subagent runs to `subagents/agent-<id>.jsonl`, older versions beside the sessions.
  const nested = basename(parent) === 'subagents';
  const isAgent = nested || name.startsWith('agent-');
  // PROJECTS/<enc>/<session>/subagents/x.jsonl, PROJECTS/<enc>/subagents/x.jsonl or PROJECTS/<enc>/x.jsonl
  const projectFolder =
    folder ??
    (!nested
      ? parent
      : basename(dirname(dirname(parent))) === 'projects'
        ? dirname(parent)
        : dirname(dirname(parent)));
  const found: FoundSession = { file: abs, folder: projectFolder, size };
  if (isAgent) {
    found.agent = name.replace(/^agent-/, '');
    const owner = dirname(parent);
    if (nested && owner !== projectFolder) found.session = basename(owner);
  } else {
    found.session = name;
  }
  return found;
}

/** Line types of Claude Code session files; lines of any other type are records when they name a session. */
const RECORD_TYPES = new Set([
  'user',
  'assistant',
  'system',
  'summary',
  'progress',
  'queue-operation',
  'file-history-snapshot',
]);

/** True for a parsed line that is a Claude Code session record. */
function isSessionRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const rec = value as Record<string, unknown>;
  return typeof rec.type === 'string' && (RECORD_TYPES.has(rec.type) || typeof rec.sessionId === 'string');
}

/**
 * Throws BAD_INPUT unless `file` is a Claude Code session: a file with at least one line that is a session
 * record. A session's first line is one, so only a file that is not a session is read to its end; without
 * this, any file given as a session (`/etc/passwd` as a hook's transcript_path) became a document and a
 * project of the store.
 */
export async function assertSessionFile(file: string): Promise<void> {
  const cannot = (err: unknown) =>
    new RlmError('BAD_INPUT', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      path: file,
    });
  const st = await fs.stat(file).catch((err: unknown) => {
    throw cannot(err);
  });
  if (!st.isFile()) throw new RlmError('BAD_INPUT', `${file} is not a file`, { path: file });
  try {
    for await (const line of readLines(file)) {
      try {
        if (isSessionRecord(JSON.parse(line.text))) return;
      } catch {
        // not JSON: not a record
      }
    }
  } catch (err) {
    throw cannot(err);
  }
  throw new RlmError(
    'BAD_INPUT',
    `${file} is not a Claude Code session file: none of its lines is a session record`,
    { path: file },
  );
}

/** The working directory and session id named by the first lines of a file (up to 64 lines). */
export async function sniff(file: string): Promise<{ cwd?: string; session?: string }> {
  const out: { cwd?: string; session?: string } = {};
  let seen = 0;
  for await (const line of readLines(file, 0, 0, 64 * 1024)) {
    if (++seen > 64 || (out.cwd && out.session)) break;
    try {
      const obj = JSON.parse(line.text) as Record<string, unknown>;
      if (typeof obj.cwd === 'string' && obj.cwd !== '') out.cwd ??= obj.cwd;
      if (typeof obj.sessionId === 'string' && obj.sessionId !== '') out.session ??= obj.sessionId;
    } catch {
      // bad lines are reported by the import itself
    }
  }
  return out;
}

/**
 * The project path a folder name stands for: Claude Code replaces `/` (and `.`) by `-`, so this is a guess,
 * used only when no session of the folder records its `cwd`.
 */
export function decodeFolderName(name: string): string {
  if (/^[A-Za-z]--/.test(name)) return `${name[0]}:\\${name.slice(3).replaceAll('-', '\\')}`;
  return name.replaceAll('-', '/');
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
