/**
 * An ingest in a child process (what `rlm serve`'s rlm_ingest runs): the child stops when its parent goes,
 * and a child that dies says how; a cancelled one stops and leaves a store that opens.
 */
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { acquireLock } from '../../memory/files/lock.ts';
import { openStore } from '../../memory/open.ts';
import { type IngestJob, ingestInChild, type ParentMessage } from '../../src/mcp/ingest-process.ts';
import { caught } from '../helpers/errors.ts';
import { childrenRunning, gone } from '../helpers/process.ts';
import { tempDir } from '../helpers/temp.ts';

const CHILD = fileURLToPath(new URL('../../src/mcp/ingest-child.ts', import.meta.url));

/** A folder of `files` files big enough that their ingest takes a while. */
function corpus(files: number): string {
  const dir = join(tempDir('rlm-ingest-child-'), 'docs');
  mkdirSync(dir);
  for (let i = 0; i < files; i++)
    writeFileSync(
      join(dir, `f${i}.txt`),
      `File ${i}: lanterns drift over the harbour at dusk.\n`.repeat(4000),
    );
  return dir;
}

const job = (location: string, paths: string[]): IngestJob => ({
  location,
  env: {},
  paths,
  options: {},
  progress: true,
});

describe('ingestInChild', () => {
  it('reports progress and the report, as an ingest in process does', async () => {
    const docs = corpus(3);
    const location = join(tempDir('rlm-ingest-child-'), 'store');
    const seen: number[] = [];
    const report = await ingestInChild(job(location, [docs]), { onProgress: (p) => seen.push(p.filesDone) });
    expect(report).toMatchObject({ documents: 3, added: 3, notes: [] });
    expect(seen.length).toBeGreaterThan(0);
    const store = await openStore(location);
    expect((await store.documents()).length).toBe(3);
    await store.close();
  });

  it('rejects with RUNTIME, saying how, when the child dies', async () => {
    const docs = corpus(40);
    const location = join(tempDir('rlm-ingest-child-'), 'store');
    let killed = false;
    const err = await caught(
      ingestInChild(job(location, [docs]), {
        onProgress: () => {
          if (killed) return;
          killed = true;
          for (const pid of childrenRunning(process.pid, 'ingest-child')) process.kill(pid, 'SIGKILL');
        },
      }),
    );
    expect(err).toMatchObject({ code: 'RUNTIME', message: 'the ingest process exited on SIGKILL' });
    // Killed mid-ingest, the store still opens.
    const store = await openStore(location);
    expect((await store.documents()).length).toBeLessThan(40);
    await store.close();
  });

  it('is cancelled by its signal, and the store it leaves opens', async () => {
    const docs = corpus(40);
    const location = join(tempDir('rlm-ingest-child-'), 'store');
    const controller = new AbortController();
    const err = await caught(
      ingestInChild(job(location, [docs]), {
        signal: controller.signal,
        onProgress: () => controller.abort(),
      }),
    );
    expect(err).toMatchObject({ code: 'ABORTED' });
    expect(childrenRunning(process.pid, 'ingest-child')).toEqual([]);
    const store = await openStore(location);
    expect((await store.documents()).length).toBeLessThan(40);
    await store.close();
  });
});

describe('ingestInChild, cancelled while the store is locked', () => {
  it('stops at once: the child gives up its wait for the lock', async () => {
    const docs = corpus(2);
    const location = join(tempDir('rlm-ingest-child-'), 'store');
    (await openStore(location, { create: true })).close();
    // Another process's ingest holds the folder store.
    const held = await acquireLock(location, { command: 'ingest' });
    onTestFinished(() => held.release());
    const controller = new AbortController();
    const started = Date.now();
    const pending = caught(
      ingestInChild({ ...job(location, [docs]), progress: false }, { signal: controller.signal }),
    );
    await sleep(1_000);
    controller.abort();
    expect(await pending).toMatchObject({ code: 'ABORTED' });
    // Well before the 10 s the server would wait before killing it.
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(childrenRunning(process.pid, 'ingest-child')).toEqual([]);
  });
});

describe('the ingest child', () => {
  it('stops when its parent is gone (the IPC channel closes) and commits nothing more', async () => {
    const docs = corpus(40);
    const location = join(tempDir('rlm-ingest-child-'), 'store');
    const child = fork(CHILD, [], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    const messages: ParentMessage['type'][] = [];
    const firstProgress = new Promise<void>((resolve) =>
      child.on('message', (m: ParentMessage) => {
        messages.push(m.type);
        resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.send({ type: 'job', job: job(location, [docs]) });
    await firstProgress;
    child.disconnect();
    expect(await exited).toBe(0);
    await gone(child.pid!);
    expect(messages).not.toContain('done');
    const store = await openStore(location);
    expect((await store.documents()).length).toBeLessThan(40);
    await store.close();
  });
});
