import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/prelude.ts'],
    reporters: ['default', new SummaryReporter()],
    pool: 'forks',
    // isolated-vm refuses to create isolates in a process started from Node's startup snapshot.
    execArgv: ['--no-node-snapshot'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
