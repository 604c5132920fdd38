/**
 * The background half of `rlm claude ingest --hook`: `node hook-worker FILE STORE LOG` (STORE `-`: the
 * PostgreSQL URL in RLM_STORE) imports one session
 * file and appends notes and errors to LOG. It runs detached, so Claude Code never waits for it; it may
 * wait for the store lock as long as it needs.
 */
import { readEnv } from '../../core/env.ts';
import { openStore, redactUrl } from '../../memory/open.ts';
import { assertSessionFile } from './files.ts';
import { note as log } from './hook-run.ts';
import { importClaude } from './import.ts';

async function run(session: string, storeDir: string, logFile: string): Promise<void> {
  try {
    // Before the store is opened: a file that is not a session leaves one line in the log and no store.
    await assertSessionFile(session);
    const store = await openStore(storeDir, { create: true, lockWaitMs: 10 * 60_000 });
    try {
      const r = await importClaude(store, { sessions: [session] });
      for (const n of r.notes) log(logFile, `note: ${n.path}: ${n.note}`);
    } finally {
      await store.close();
    }
  } catch (err) {
    const e = err as { code?: string; message?: string };
    log(
      logFile,
      `error: importing ${session} into ${redactUrl(storeDir)}: ${e.message ?? String(err)}${e.code ? ` [${e.code}]` : ''}`,
    );
  }
}

const [session, storeArg, logFile] = process.argv.slice(2);
// `-`: a PostgreSQL URL, passed in RLM_STORE (hook-run.ts), out of `ps`'s sight.
const storeDir = storeArg === '-' ? readEnv().store : storeArg;
if (session && storeDir && logFile) await run(session, storeDir, logFile);
