/**
 * A store one of whose files this user may not read (its mode changed, or it belongs to someone else): a
 * command that needs the file says so as ACCESS_DENIED naming it, and `rlm repair` stops there, changing
 * nothing. Before, repair took the unreadable chunk file for a damaged one and, with --yes, dropped its
 * documents and deleted it; peek and search printed a bare EACCES. The commands run in a child process
 * as a user the mode stops ("nobody" when the tests run as root, whom modes do not stop).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';

const launcher = fileURLToPath(new URL('../mcp/helpers/launch.ts', import.meta.url));
const asRoot = process.getuid?.() === 0;

/** A store of two documents in two segments, open to everyone, and the second segment's files. */
async function twoSegments() {
  const root = mkdtempSync(path.join(tmpdir(), 'rlm-unreadable-'));
  chmodSync(root, 0o755);
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const store = path.join(root, 'store');
  const s = await ChunkStore.open(store, { create: true });
  for (const [name, text] of [
    ['rivers.md', '# Rivers\n\nThe river carries stones to the sea.\n'],
    ['lanterns.md', '# Lanterns\n\nThe keeper lit the lantern at dusk.\n'],
  ] as const) {
    const file = path.join(root, name);
    writeFileSync(file, text);
    await s.ingestPaths([file]);
  }
  const ids = s.documents().map((d) => d.id);
  const segment = s.documents().find((d) => d.path?.endsWith('lanterns.md'))!.segment;
  await s.close();
  // Writable by the user the commands run as: only the file made unreadable stops them.
  spawnSync('chmod', ['-R', 'a+rwX', store]);
  const segments = path.join(store, 'segments');
  const files = readdirSync(segments).filter((f) => f.startsWith(`${segment}.`));
  return { store, ids, file: (kind: string) => path.join(segments, `${segment}.${kind}`), files };
}

function rlm(args: string[]) {
  return spawnSync(process.execPath, [launcher, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: tmpdir() },
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    timeout: 60_000,
  });
}

describe('a store file this user may not read', () => {
  it('stops rlm repair --yes with ACCESS_DENIED naming it; nothing is dropped or deleted', async () => {
    for (const kind of ['chunks', 'bm25', 'links']) {
      const { store, ids, file, files } = await twoSegments();
      chmodSync(file(kind), 0o000);
      const r = rlm(['repair', '--yes', '--store', store]);
      chmodSync(file(kind), 0o644);
      expect(r.status, `${kind}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stderr, kind).toContain(`store file ${file(kind)} cannot be read by this user (EACCES)`);
      expect(r.stderr, kind).toContain('[ACCESS_DENIED]');
      expect(r.stdout, kind).not.toContain('dropped');
      for (const f of files) expect(existsSync(path.join(store, 'segments', f)), `${kind}: ${f}`).toBe(true);
      const s = await ChunkStore.open(store);
      expect(
        s
          .documents()
          .map((d) => d.id)
          .sort(),
        kind,
      ).toEqual([...ids].sort());
      expect((await s.grep('lantern', { count: true })).counts?.matches, kind).toBe(1);
      await s.close();
    }
  }, 120_000);

  it('still repairs what is damaged, not unreadable: a chunk file that became a folder', async () => {
    const { store, ids, file } = await twoSegments();
    rmSync(file('chunks'));
    mkdirSync(file('chunks'));
    chmodSync(file('chunks'), 0o777);
    const r = rlm(['repair', '--yes', '--store', store]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/dropped document lanterns/);
    const s = await ChunkStore.open(store);
    expect(s.documents().map((d) => d.id)).toEqual(ids.filter((id) => !id.startsWith('lanterns')));
    await s.close();
  }, 120_000);

  it('makes peek, search and grep say ACCESS_DENIED naming it, not a bare EACCES', async () => {
    const { store, ids, file } = await twoSegments();
    chmodSync(file('chunks'), 0o000);
    chmodSync(file('bm25'), 0o000);
    const lantern = ids.find((id) => id.startsWith('lanterns'))!;
    for (const args of [
      ['peek', lantern],
      ['search', 'lantern keeper'],
      ['grep', 'lantern'],
    ]) {
      const r = rlm([...args, '--store', store]);
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(1);
      expect(r.stderr, args[0]).toMatch(/cannot be read by this user \(EACCES\).*\[ACCESS_DENIED\]\n$/);
      expect(r.stderr, args[0]).not.toContain('unexpected error');
    }
  }, 120_000);
});
