#!/usr/bin/env node
// No --no-node-snapshot: isolated-vm needs it only where isolates are created, and the sandbox creates
// them in child processes it starts with the flag. Without it Node boots from its snapshot, ~70 ms faster.
// The version check comes before anything else is loaded: older Nodes fail inside the compiled code
// (new regex syntax, the native isolated-vm module) with messages that do not say what is wrong.
// Keep this file plain JavaScript that Node 18 parses.
const REQUIRED_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= REQUIRED_MAJOR)) {
  process.stderr.write(
    `rlm: needs Node.js ${REQUIRED_MAJOR} or newer, but this is Node.js ${process.versions.node} (${process.execPath}). ` +
      `Install Node ${REQUIRED_MAJOR} (e.g. \`nvm install ${REQUIRED_MAJOR}\`) and make sure it comes first on PATH, or set your MCP host's command to that node binary.\n`,
  );
  process.exit(1);
}
const { run } = await import('../dist/src/cli/main.js');
await run();
