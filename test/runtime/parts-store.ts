/**
 * A store holding one big log stored in parts and a short runbook, built the same way every time: the
 * context of the recorded run `test/fixtures/model-replies/store-parts.json`, where a model answers
 * from facts that lie in later parts of the log.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Rng } from '../../benchmarks/rng.ts';
import { ChunkStore } from '../../memory/files/store.ts';

/** Lines of the log; the facts the question asks for sit past its first part. */
const LINES = 24_000;
/** The size of the log's parts: some 1.4 MB of log in 6 parts. */
const PART_BYTES = 256 * 1024;
/** The question of the recorded run, and the facts it hinges on. */
export const QUESTION =
  'In service.log, when did host-13 first report that its disk was full, and which host reported the last recovery? Answer as: TIME, HOST';
export const FIRST_DISK_FULL = { line: 9_731, time: '2026-03-01T02:42:11Z' };
export const LAST_RECOVERY = { line: 21_402, host: 'host-05' };

function time(line: number): string {
  return new Date(Date.UTC(2026, 2, 1) + line * 1000).toISOString().replace('.000Z', 'Z');
}

/** The log's text. */
function serviceLog(): string {
  const rng = new Rng(2411);
  const out: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const host = `host-${String(1 + Math.floor(rng.next() * 20)).padStart(2, '0')}`;
    let event = `INFO request served in ${1 + Math.floor(rng.next() * 400)} ms`;
    if (i === FIRST_DISK_FULL.line) event = 'ERROR disk full on /var/lib/pg';
    else if (i > FIRST_DISK_FULL.line && i % 1_777 === 0) event = 'ERROR disk full on /var/lib/pg';
    else if (i % 2_311 === 0 && i <= LAST_RECOVERY.line) event = 'WARN recovered after failover';
    else if (i === LAST_RECOVERY.line) event = 'WARN recovered after failover';
    const who = i === FIRST_DISK_FULL.line ? 'host-13' : i === LAST_RECOVERY.line ? LAST_RECOVERY.host : host;
    // Other hosts' disks fill up too, before host-13's does.
    if (i > 0 && i < FIRST_DISK_FULL.line && i % 3_001 === 0) event = 'ERROR disk full on /var/log';
    out.push(`${time(i)} ${who} ${event}\n`);
  }
  return out.join('');
}

/** Writes the two files under `dir` and ingests them into `dir/store`; returns the store's folder. */
export async function writePartsStore(dir: string): Promise<string> {
  const files = path.join(dir, 'files');
  mkdirSync(files, { recursive: true });
  writeFileSync(path.join(files, 'service.log'), serviceLog());
  writeFileSync(
    path.join(files, 'runbook.md'),
    '# Runbook\n\nWhen a disk fills up, fail over to the standby (host-02 in staging) and page the on-call.\n',
  );
  const location = path.join(dir, 'store');
  const store = await ChunkStore.open(location, { create: true });
  await store.ingestPaths([files], { partBytes: PART_BYTES });
  await store.close();
  return location;
}
