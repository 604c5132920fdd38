/**
 * Symlinks out of the folders given, and the kernel's trees, over every way a folder gets walked: the
 * scan itself, both stores' ingestPaths, `rlm ingest`, a run's paths (`--context`, the library, MCP
 * rlm_answer), MCP rlm_ingest and the Claude Code import (of the projects folder, and of one session's
 * subagent runs). One tree with a link of each kind; each entry point must take what is inside and skip
 * the rest with a note.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inSystemTree } from '../../../core/paths.ts';
import { ChunkStore } from '../../../memory/files/store.ts';
import { MemoryChunkStore } from '../../../memory/in-memory/store.ts';
import { scanPaths } from '../../../memory/ingest/files.ts';
import { linkFence } from '../../../memory/ingest/link-fence.ts';
import { findSessions, sessionAt, subagentRuns } from '../../../src/claude/files.ts';
import { loadInput } from '../../../src/runtime/input.ts';
import { cli } from '../../cli/helpers.ts';
import { tempDir } from '../../helpers/temp.ts';
import { connect } from '../../mcp/helpers/connect.ts';

/**
 * A secret file beside a tree that holds a real file, a folder link and a file link that
 * lead outside, a link inside the tree, and links into /proc.
 */
function hostileTree(): { base: string; root: string } {
  const base = tempDir('rlm-links-');
  const outside = join(base, 'outside');
  const root = join(base, 'root');
  mkdirSync(outside);
  mkdirSync(join(root, 'docs'), { recursive: true });
  writeFileSync(join(outside, 'secret.md'), 'the private key is hunter2\n');
  writeFileSync(join(root, 'docs', 'readme.md'), 'the launch is on Tuesday\n');
  symlinkSync(outside, join(root, 'home'));
  symlinkSync(join(outside, 'secret.md'), join(root, 'secret.md'));
  symlinkSync(join(root, 'docs'), join(root, 'again'));
  symlinkSync('/proc/self', join(root, 'proc'));
  symlinkSync('/proc/self/status', join(root, 'status.txt'));
  return { base, root };
}

/**
 * What an entry point took (file paths, relative to root) and the paths it left a note for; `notes` is
 * how many when `noted` lists only the first few (a run's shape names three).
 */
interface Outcome {
  taken: string[];
  noted: string[];
  notes?: number;
}

const relative = (root: string, paths: readonly (string | null)[]) =>
  paths.map((p) => (p ?? '').slice(root.length + 1)).sort();

/** The outcome from what was taken and the notes, both by absolute path. */
const outcome = (
  root: string,
  taken: readonly { path: string | null }[],
  notes: readonly { path: string }[],
): Outcome => ({
  taken: relative(
    root,
    taken.map((t) => t.path),
  ),
  noted: relative(
    root,
    notes.map((n) => n.path),
  ),
});

/** What the file store at `dir` holds, with `notes`. */
async function storeOutcome(root: string, dir: string, notes: readonly { path: string }[]): Promise<Outcome> {
  const store = await ChunkStore.open(dir);
  try {
    return outcome(root, store.documents(), notes);
  } finally {
    await store.close();
  }
}

const INSIDE = ['again/readme.md', 'docs/readme.md'];
const LINKS_OUT = ['home', 'secret.md'];
const SYSTEM = ['proc', 'status.txt'];

/** Every entry point that walks folders; `follows` when the entry point has the option to follow links. */
const ENTRY_POINTS: {
  name: string;
  follows: boolean;
  run: (root: string, follow: boolean) => Promise<Outcome>;
}[] = [
  {
    name: 'scanPaths',
    follows: true,
    run: async (root, follow) => {
      const scan = await scanPaths([root], follow ? { followLinks: true } : {});
      return outcome(root, scan.files, scan.notes);
    },
  },
  {
    name: 'MemoryChunkStore.ingestPaths',
    follows: true,
    run: async (root, follow) => {
      const store = new MemoryChunkStore();
      const r = await store.ingestPaths([root], follow ? { followLinks: true } : {});
      return outcome(root, store.documents(), r.notes);
    },
  },
  {
    name: 'ChunkStore.ingestPaths',
    follows: true,
    run: async (root, follow) => {
      const dir = join(tempDir(), 'store');
      const store = await ChunkStore.open(dir, { create: true });
      const r = await store
        .ingestPaths([root], follow ? { followLinks: true } : {})
        .finally(() => store.close());
      return storeOutcome(root, dir, r.notes);
    },
  },
  {
    name: 'rlm ingest',
    follows: true,
    run: async (root, follow) => {
      const dir = join(tempDir(), 'store');
      const r = await cli(['ingest', root, '--store', dir, ...(follow ? ['--follow-links'] : [])]);
      expect(r.code).toBe(0);
      const noted = [...r.stderr.matchAll(/^rlm: note: (\S+): /gm)].map((m) => ({ path: m[1]! }));
      return storeOutcome(root, dir, noted);
    },
  },
  {
    name: 'a run over paths (--context, the library, MCP rlm_answer)',
    follows: false,
    run: async (root) => {
      const loaded = await loadInput({ question: 'when?', paths: [root] }, 1_000_000);
      try {
        return {
          // Paths below their common folder, and what was left out by file name: the model never sees
          // host folders.
          taken: (loaded.contextFiles ?? []).map((d) => d.path.replace(/^root\//, '')).sort(),
          noted: [...(loaded.shape.leftOut?.unreadableExamples ?? [])],
          notes: loaded.shape.leftOut?.unreadable ?? 0,
        };
      } finally {
        await loaded.close();
      }
    },
  },
  {
    name: 'MCP rlm_ingest',
    follows: false,
    run: async (root) => {
      const dir = join(tempDir(), 'store');
      const s = await connect({ cwd: root, env: { RLM_STORE: dir } });
      const r = await s.call('rlm_ingest', { paths: [root] }).finally(() => s.close());
      expect(r.isError).toBeFalsy();
      return storeOutcome(root, dir, (r.structuredContent as { notes: { path: string }[] }).notes);
    },
  },
];

describe.each(ENTRY_POINTS)('$name', ({ run }) => {
  it('takes what is inside the folder, skips links that lead out of it or into /proc, with a note each', async () => {
    const { root } = hostileTree();
    const out = await run(root, false);
    expect(out.taken).toEqual(INSIDE);
    const skipped = [...LINKS_OUT, ...SYSTEM].sort();
    expect(out.notes ?? out.noted.length).toBe(skipped.length);
    expect(out.noted).toEqual(skipped.slice(0, out.noted.length));
    expect(out.noted.length).toBeGreaterThanOrEqual(3);
  });
});

describe.each(ENTRY_POINTS.filter((e) => e.follows))('$name, told to follow links', ({ run }) => {
  it('follows links out of the folder, never into /proc', async () => {
    const { root } = hostileTree();
    const out = await run(root, true);
    expect(out.taken).toEqual([...INSIDE, 'home/secret.md', 'secret.md'].sort());
    expect(out.noted).toEqual(SYSTEM);
  });
});

describe('the paths given', () => {
  it('a link given by name is followed wherever it leads; links inside it may lead anywhere below it', async () => {
    const { base, root } = hostileTree();
    const scan = await scanPaths([join(root, 'home')]);
    expect(scan.files.map((f) => f.path)).toEqual([join(root, 'home', 'secret.md')]);
    // Two roots: a link from one into the other stays inside what was given.
    const both = await scanPaths([root, join(base, 'outside')]);
    expect(
      relative(
        base,
        both.files.map((f) => f.path),
      ),
    ).toEqual([
      'outside/secret.md',
      'root/again/readme.md',
      'root/docs/readme.md',
      'root/home/secret.md',
      'root/secret.md',
    ]);
  });

  it.each(['/proc/self', '/sys/kernel', '/dev'])(
    '%s given by name, or through a link, is never walked',
    async (tree) => {
      const link = join(tempDir(), 'system');
      symlinkSync(tree, link);
      for (const given of [tree, link]) {
        const scan = await scanPaths([given], { followLinks: true });
        expect(scan.files).toEqual([]);
        expect(scan.notes).toEqual([{ path: given, note: expect.stringMatching(/never read$/) }]);
      }
    },
  );

  it('the fence judges real paths, and only /proc, /sys and /dev are system trees', () => {
    expect(['/proc', '/proc/1/root', '/sys/x', '/dev/null'].every(inSystemTree)).toBe(true);
    expect(['/process', '/devices', '/', '/home/u/proc'].some(inSystemTree)).toBe(false);
    const fence = linkFence(['/home/u/notes'], false);
    expect(fence('/home/u/notes/a.md')).toBeNull();
    expect(fence('/home/u/notes-old/a.md')).toMatch(/outside the folders given/);
    expect(linkFence(['/home/u/notes'], true)('/etc/passwd')).toBeNull();
    expect(linkFence(['/'], true)('/proc/self/environ')).toMatch(/never read/);
  });
});

describe('rlm claude ingest', () => {
  it('reads a session file that is a link only when it leads inside the projects folder', async () => {
    const base = tempDir('rlm-links-claude-');
    const project = join(base, 'projects', '-home-u-app');
    mkdirSync(project, { recursive: true });
    mkdirSync(join(base, 'elsewhere'));
    const line = `${JSON.stringify({ type: 'user', sessionId: 's', message: { role: 'user', content: 'hi' } })}\n`;
    writeFileSync(join(project, 'real.jsonl'), line);
    writeFileSync(join(base, 'elsewhere', 'private.jsonl'), line);
    symlinkSync(join(project, 'real.jsonl'), join(project, 'inside.jsonl'));
    symlinkSync(join(base, 'elsewhere', 'private.jsonl'), join(project, 'outside.jsonl'));
    symlinkSync('/proc/self/status', join(project, 'status.jsonl'));
    const notes: { path: string; note: string }[] = [];
    const found = await findSessions(join(base, 'projects'), notes);
    expect(found.map((f) => f.file)).toEqual([join(project, 'inside.jsonl'), join(project, 'real.jsonl')]);
    expect(notes.map((n) => n.path)).toEqual([join(project, 'outside.jsonl'), join(project, 'status.jsonl')]);
    expect(notes[0]?.note).toMatch(/outside the folders given/);
  });

  it("follows a session's subagent links, when it is imported alone, only inside its project folder", async () => {
    const base = tempDir('rlm-links-claude-');
    const project = join(base, 'projects', '-home-u-app');
    const runs = join(project, 's', 'subagents');
    mkdirSync(runs, { recursive: true });
    mkdirSync(join(base, 'elsewhere'));
    const line = `${JSON.stringify({ type: 'user', sessionId: 's', message: { role: 'user', content: 'hi' } })}\n`;
    writeFileSync(join(project, 's.jsonl'), line);
    writeFileSync(join(project, 'kept.jsonl'), line);
    writeFileSync(join(base, 'elsewhere', 'private.jsonl'), line);
    symlinkSync(join(project, 'kept.jsonl'), join(runs, 'agent-in.jsonl'));
    symlinkSync(join(base, 'elsewhere', 'private.jsonl'), join(runs, 'agent-out.jsonl'));
    symlinkSync('/proc/self/status', join(runs, 'agent-status.jsonl'));
    const notes: { path: string; note: string }[] = [];
    const main = (await sessionAt(join(project, 's.jsonl'), undefined, notes))!;
    const found = await subagentRuns(main, notes);
    expect(found.map((f) => f.file)).toEqual([join(runs, 'agent-in.jsonl')]);
    expect(notes.map((n) => n.path)).toEqual([
      join(runs, 'agent-out.jsonl'),
      join(runs, 'agent-status.jsonl'),
    ]);
    expect(notes[0]?.note).toMatch(/outside the folders given/);
    expect(notes[1]?.note).toMatch(/never read/);
  });
});
