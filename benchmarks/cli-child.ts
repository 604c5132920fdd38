/** Runs the rlm CLI from source in a child process (the load test's servers). */
import { run } from '../src/cli/main.ts';

await run();
