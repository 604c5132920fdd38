/**
 * `rlm/sandbox`: the isolated-vm session the model's code runs in, with the model's globals (`context`,
 * `peek`, `grep`, `search_chunks`, `FINAL`, ...) wired to a {@link SandboxHost} you provide. Loads
 * isolated-vm and acorn, but not the runtime's providers or the MCP server.
 */
export type { SandboxHost } from './host.ts';
export { createSandbox } from './session.ts';
export type { BlockError, BlockResult, Sandbox, SandboxErrorCode, SandboxLimits } from './types.ts';
