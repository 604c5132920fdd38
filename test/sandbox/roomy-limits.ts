import type { SandboxLimits } from '../../src/sandbox/types.ts';

/**
 * Sandbox limits for tests of ordinary work, far above what their blocks need however loaded the machine.
 * The CPU limit is isolated-vm's execution timeout, which counts wall time while a block runs: on a
 * two-core machine running other suites, a block that got 40 ms of CPU was stopped at a 300 ms limit.
 * A test of a limit sets that limit itself; these stay below the test timeout, so a block that loops by
 * mistake still ends as a failed assertion rather than a hung test.
 */
export const ROOMY_LIMITS: Readonly<SandboxLimits> = { cpuMs: 60_000, wallMs: 90_000 };
