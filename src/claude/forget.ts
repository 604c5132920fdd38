/** `rlm claude forget --project P`: deletes every imported session of a project, in one commit. */
import { RlmError } from '../../core/errors.ts';
import { plural } from '../../core/plural.ts';
import type { Store } from '../../memory/store-api.ts';
import { timeline } from './catalog.ts';

export interface ForgetReport {
  /** The projects' real paths. */
  projects: string[];
  sessions: number;
  /** Store documents (session parts) deleted. */
  documents: number;
}

/**
 * Deletes the sessions of the project `project` names (a path or its last segments); BAD_INPUT, deleting
 * nothing, when last segments name several.
 */
export async function forgetProject(store: Store, project: string): Promise<ForgetReport> {
  const sessions = await timeline(store, { project });
  const projects = [...new Set(sessions.map((s) => s.project))];
  // Last segments name a project to read; to delete, they must name one alone (deletion cannot be
  // undone once Claude Code has cleaned up the session files).
  if (projects.length > 1)
    throw new RlmError(
      'BAD_INPUT',
      `'${project}' matches ${plural(projects.length, 'project')} (${projects.sort().join(', ')}); give the one to forget by its path, nothing was deleted`,
      { projects },
    );
  const report = await store.importDocuments(async function* (docs) {
    yield {
      drop: docs
        .filter((d) => d.meta?.source === 'claude-code' && projects.includes(String(d.meta.project)))
        .map((d) => d.id),
    };
  });
  return { projects, sessions: sessions.length, documents: report.removed };
}
