import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The run's own temp folder, checked for leftovers at the end (see the file); then the prelude bundle.
    globalSetup: ['test/setup/run-temp.ts', 'test/setup/prelude.ts'],
    reporters: ['default', new SummaryReporter()],
    pool: 'forks',
    // isolated-vm refuses to create isolates in a process started from Node's startup snapshot.
    execArgv: ['--no-node-snapshot'],
    // Hang detectors, not speed limits: far above what the slowest test takes on a two-core machine
    // running other suites beside this one (about 40 s), so only a test that never ends reaches them.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
