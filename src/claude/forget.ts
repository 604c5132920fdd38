/** `rlm claude forget --project P`: deletes every imported session of a project, in one commit. */
import type { Store } from '../../memory/store-api.ts';
import { timeline } from './catalog.ts';

export interface ForgetReport {
  /** The projects' real paths. */
  projects: string[];
  sessions: number;
  /** Store documents (session parts) deleted. */
  documents: number;
}

/** Deletes the sessions of the projects matching `project` (a path or its last segments). */
export async function forgetProject(store: Store, project: string): Promise<ForgetReport> {
  const sessions = await timeline(store, { project });
  const projects = [...new Set(sessions.map((s) => s.project))];
  const report = await store.importDocuments(async function* (docs) {
    yield {
      drop: docs
        .filter((d) => d.meta?.source === 'claude-code' && projects.includes(String(d.meta.project)))
        .map((d) => d.id),
    };
  });
  return { projects, sessions: sessions.length, documents: report.removed };
}
