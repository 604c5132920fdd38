/*
 * What `init` binds when a session takes the isolate: its configuration and the context documents.
 * Held in this module's variables only, never on a global.
 */
import type { PreludeConfig } from './config.ts';
import { $Error } from './intrinsics.ts';

let config: PreludeConfig | null = null;

/** The context documents when the context is loaded in the isolate (isolated-vm external strings). */
export const docs: string[] = [];

export function bindSession(bound: PreludeConfig, documents: readonly string[]): void {
  if (config !== null) throw new $Error('already initialised');
  config = bound;
  for (let i = 0; i < documents.length; i++) docs[i] = documents[i]!;
}

/** The session's configuration; only model code calls what needs it, and model code runs after init. */
export function sessionConfig(): PreludeConfig {
  if (config === null) throw new $Error('the sandbox is not initialised');
  return config;
}

/** The isolate's memory limit, MB (128 before a session binds one). */
export function memoryLimitMb(): number {
  return config === null ? 128 : config.memoryMb;
}
