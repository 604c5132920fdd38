// Says why rlm cannot serve, where an MCP host shows it. A host starting a stdio server prints nothing of
// its stderr in its status ("Failed to connect: Connection closed"), but it does print the message of an
// error reply to its `initialize` request. So a server that cannot start answers every request with that
// message up to the host's `initialize` (Claude Code sends a `server/discover` probe first, and takes an
// error there for "no such method"), then exits 1.
// Keep this file plain JavaScript that Node 18 parses: bin/rlm.js calls it before checking anything else.

/** JSON-RPC's "internal error". */
const INTERNAL_ERROR = -32603;
/** How long to wait for the client's `initialize`. */
const WAIT_MS = 10000;
/** Requests answered before giving up on an `initialize` that does not come. */
const MAX_REPLIES = 10;

/**
 * Writes `message` (one line) to stderr, then, when stdin is a pipe, answers the JSON-RPC requests read
 * from it with an error carrying that message, up to and including `initialize`. Resolves when done; the
 * caller exits.
 */
export function refuseMcp(message, io) {
  const stdin = io?.stdin ?? process.stdin;
  const stdout = io?.stdout ?? process.stdout;
  const stderr = io?.stderr ?? process.stderr;
  stderr.write(message + '\n');
  if (stdin.isTTY) return Promise.resolve();
  return new Promise((resolve) => {
    let buffered = '';
    let done = false;
    let replies = 0;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.removeListener('data', onData);
      stdin.removeListener('end', onEnd);
      stdin.removeListener('error', onEnd);
      stdin.pause();
      // An empty write's callback runs once the replies before it are flushed.
      stdout.write('', () => resolve());
    };
    const reply = (request) => {
      stdout.write(
        JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: INTERNAL_ERROR, message } }) + '\n',
      );
      replies++;
    };
    const onData = (chunk) => {
      buffered += String(chunk);
      let end = buffered.indexOf('\n');
      while (end !== -1) {
        const line = buffered.slice(0, end).trim();
        buffered = buffered.slice(end + 1);
        const request = parse(line);
        // Notifications have no id and get no reply; requests do, until the host's initialize.
        if (request !== undefined && request.id !== undefined && request.id !== null) {
          reply(request);
          if (request.method === 'initialize' || replies >= MAX_REPLIES) return finish();
        }
        end = buffered.indexOf('\n');
      }
      if (buffered.length > 1 << 20) finish();
    };
    const onEnd = () => finish();
    const timer = setTimeout(onEnd, WAIT_MS);
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.on('error', onEnd);
  });
}

function parse(line) {
  if (line === '') return undefined;
  try {
    const value = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** True when argv (after the node and script paths) starts an MCP server over stdio. */
export function servesStdio(args) {
  if (args[0] !== 'serve' || args.includes('--help') || args.includes('-h')) return false;
  const i = args.indexOf('--transport');
  const transport = i === -1 ? undefined : args[i + 1];
  const inline = args.find((a) => a.startsWith('--transport='));
  return (inline ? inline.slice('--transport='.length) : transport || 'stdio') === 'stdio';
}
