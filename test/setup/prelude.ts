/**
 * Vitest global setup: bundles the sandbox prelude from its sources before any test runs, so the
 * isolates of every test (and of the isolate processes they start) evaluate the code under test.
 */
import { writePrelude } from '../../build-prelude.ts';

export default async function setup(): Promise<void> {
  await writePrelude();
}
