/**
 * `npm run bench hostile`: ingest time over input shaped to be slow. A Claude Code session whose one message
 * is 20 MB without a blank (and the same size of ordinary words beside it), `rlm ingest`'s path over a
 * 20 MB unbroken file, and chunking plus classification of hostile shapes at two sizes: linear work
 * shows as twice the time for twice the input. The tests check the same by work counters
 * (test/memory/ingest/linear.test.ts); this file gives the seconds.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Figures = Record<string, number>;

/** Wall and CPU milliseconds of `fn`. */
async function timed(fn: () => Promise<unknown> | unknown): Promise<{ ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await fn();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - t, cpuMs: (used.user + used.system) / 1000 };
}

/** A session file whose assistant message is `text`. */
function sessionFile(dir: string, text: string): string {
  const project = join(dir, 'projects', '-home-u-app');
  mkdirSync(project, { recursive: true });
  const line = (type: string, content: unknown) =>
    JSON.stringify({
      type,
      uuid: type,
      sessionId: 's1',
      cwd: '/home/u/app',
      timestamp: '2026-01-01T00:00:00Z',
      message: { role: type, content },
    });
  const file = join(project, 's1.jsonl');
  writeFileSync(file, `${line('user', 'hello')}\n${line('assistant', [{ type: 'text', text }])}\n`);
  return join(dir, 'projects');
}

const words = (n: number) => {
  const parts: string[] = [];
  for (let i = 0; parts.length * 7 < n; i++) parts.push(`word${i % 97} `);
  return parts.join('').slice(0, n);
};

/** Shapes chunked and classified at two sizes. */
export const SHAPES: Record<string, (n: number) => string> = {
  'one long token': (n) => 'a'.repeat(n),
  'long blank run': (n) => `x${' '.repeat(n)}y`,
  'backtick run': (n) => '`'.repeat(n),
  'heading with a long blank run': (n) => `# t${' '.repeat(n)}#`,
  'deep brackets': (n) => `${'['.repeat(n / 2)}${']'.repeat(n / 2)}`,
  'ordinary words': words,
};

export async function benchHostile({ log }: { log: (s: string) => void }): Promise<Figures> {
  const { ChunkStore } = await import('../memory/files/store.ts');
  const { importClaude } = await import('../src/claude/import.ts');
  const { chunkText, chunkerFor } = await import('../memory/ingest/chunkers/index.ts');
  const { classifyChunk } = await import('../memory/ingest/classify.ts');
  const { countTokens } = await import('../memory/ingest/tokens.ts');
  countTokens('warm the tokenizer up');
  const f: Figures = {};
  const root = mkdtempSync(join(tmpdir(), 'rlm-bench-hostile-'));
  try {
    const imports: [string, number, (n: number) => string][] = [
      ['claudeToken10', 10, (n) => 'a'.repeat(n)],
      ['claudeToken20', 20, (n) => 'a'.repeat(n)],
      ['claudeWords20', 20, words],
    ];
    for (const [key, mb, make] of imports) {
      const dir = join(root, key);
      const projectsDir = sessionFile(dir, make(mb * 1_000_000));
      const store = await ChunkStore.open(join(dir, 'store'), { create: true });
      const t = await timed(() => importClaude(store, { projectsDir }));
      await store.close();
      f[`${key}Ms`] = t.ms;
      f[`${key}CpuMs`] = t.cpuMs;
      log(`${key}: ${(t.ms / 1000).toFixed(1)} s`);
    }
    for (const mb of [10, 20]) {
      const dir = join(root, `ingest${mb}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'blob.txt'), 'a'.repeat(mb * 1_000_000));
      const store = await ChunkStore.open(join(dir, 'store'), { create: true });
      const t = await timed(() => store.ingestPaths([join(dir, 'blob.txt')]));
      await store.close();
      f[`ingestToken${mb}Ms`] = t.ms;
      f[`ingestToken${mb}CpuMs`] = t.cpuMs;
      log(`ingest ${mb} MB unbroken: ${(t.ms / 1000).toFixed(1)} s`);
    }
    const MB = 2_000_000;
    for (const [i, [name, make]] of Object.entries(SHAPES).entries()) {
      for (const file of ['a.txt', 'a.md', 'a.ts']) {
        // The least of three runs: the machine is shared, and a pause only ever adds time.
        const cpu = [MB, 2 * MB].map((n) => {
          const text = make(n);
          const chunker = chunkerFor(file, text);
          let least = Number.POSITIVE_INFINITY;
          for (let run = 0; run < 3; run++) {
            const used = process.cpuUsage();
            for (const c of chunkText(text, chunker, { path: file }))
              classifyChunk(c.text, { chunker, path: file });
            const u = process.cpuUsage(used);
            least = Math.min(least, (u.user + u.system) / 1000);
          }
          return least;
        });
        f[`shape${i}.${file}.smallCpuMs`] = cpu[0]!;
        f[`shape${i}.${file}.largeCpuMs`] = cpu[1]!;
      }
      log(`${name}: done`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return f;
}
