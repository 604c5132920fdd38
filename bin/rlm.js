#!/usr/bin/env node
// No --no-node-snapshot: isolated-vm needs it only where isolates are created, and the sandbox creates
// them in child processes it starts with the flag. Without it Node boots from its snapshot, ~70 ms faster.
// The version check comes before anything else is loaded: older Nodes fail inside the compiled code
// (new regex syntax, the native isolated-vm module) with messages that do not say what is wrong.
// Keep this file plain JavaScript that Node 18 parses.
// Started as a stdio MCP server, it also answers the host's requests up to its initialize with that line,
// since hosts show such an error in their server status and none of the server's stderr.
const REQUIRED_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= REQUIRED_MAJOR)) {
  const message =
    `rlm: needs Node.js ${REQUIRED_MAJOR} or newer, but this is Node.js ${process.versions.node} (${process.execPath}). ` +
    `Install Node ${REQUIRED_MAJOR} (e.g. \`nvm install ${REQUIRED_MAJOR}\`) and make sure it comes first on PATH, or set your MCP host's command to that node binary.`;
  const { refuseMcp, servesStdio } = await import('./lib/mcp-refuse.js');
  if (servesStdio(process.argv.slice(2))) await refuseMcp(message);
  else process.stderr.write(`${message}\n`);
  process.exit(1);
}
// Ingest and repair stream text through segment-sized batches: what they allocate dies young or lives
// for a whole segment, so a young generation grown to V8's maximum (semi-spaces of up to 64 MiB on a
// machine with plenty of RAM) only adds to the peak RSS. Measured on 100 MB of Markdown: 357 -> 233 MB
// (many files) and 392 -> 256 MB (one file), same CPU time. V8 fixes the maximum at startup: the re-run
// below (Linux) sets it, and growth is stopped here too (where there is no re-run, and before it); the
// other commands (the sandbox) keep V8's default.
// `rlm claude ingest` imports sessions the same way, and `rlm store copy` copies a store so. Ingest,
// repair and copy then let it grow to a few MiB (core/batch-heap.ts): at 1-2 MiB the scavenges
// themselves were a tenth of an ingest's CPU.
const [command, subcommand] = process.argv.slice(2);
if (
  command === 'ingest' ||
  command === 'repair' ||
  (command === 'claude' && subcommand === 'ingest') ||
  (command === 'store' && subcommand === 'copy')
) {
  // On Linux, first runs itself again with one malloc arena (bin/lib/batch-malloc.js): it does not return then.
  const { execWithBatchMalloc } = await import('./lib/batch-malloc.js');
  execWithBatchMalloc();
  const v8 = await import('node:v8');
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
// The published package runs its build; a clone or a Claude Code plugin copy without one (no `npm run
// build`) runs the TypeScript sources, which Node 24 loads as they are (erasable syntax only).
const { existsSync } = await import('node:fs');
const built = new URL('../dist/src/cli/main.js', import.meta.url);
const { run } = await import(existsSync(built) ? built.href : '../src/cli/main.ts');
await run();
