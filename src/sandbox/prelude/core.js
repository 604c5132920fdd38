/*
 * The heart of the prelude: the bounded output buffer, the one host-call path, the model's helpers
 * (print, console, FINAL, FINAL_VAR, peek, grep, search_chunks, get_chunk, neighbors, llm_query,
 * llm_query_batched) and the block runner the host drives.
 *
 * Host calls: the host function arrives as an isolated-vm Reference held only in this closure. Every
 * call sends one JSON string and gets one JSON string back through `applySyncPromise`, which blocks the
 * isolate until the host's promise settles — so `llm_query('x')` returns the answer with or without
 * `await`, and the wait counts against the wall-clock limit but not the CPU limit. Errors come back as
 * data and are rethrown here as fresh isolate errors carrying only a message.
 */
// Set once by init(): the host Reference, the session's config and the output bounds.
let hostRef = null;
let applySyncPromise = null;
let config = null;
let headMax = 0;
let tailMax = 0;

let outHead = '';
let outTail = '';
let outTotal = 0;
let finalAnswer = null;

function write(s) {
  writeBuffer(s);
  mirrorWrite();
}

function writeBuffer(s) {
  outTotal += s.length;
  if (outHead.length < headMax) {
    const room = headMax - outHead.length;
    if (s.length <= room) {
      outHead += s;
      return;
    }
    outHead += StringSlice(s, 0, room);
    s = StringSlice(s, room);
  }
  outTail += s;
  // Trimmed lazily: a flood of small writes stays amortised O(1) per write.
  if (outTail.length > 2 * tailMax + 4096) outTail = StringSlice(outTail, outTail.length - tailMax);
}

function takeOutput() {
  const tail = outTail.length > tailMax ? StringSlice(outTail, outTail.length - tailMax) : outTail;
  const omitted = outTotal - outHead.length - tail.length;
  const text =
    omitted > 0 ? outHead + config.marker.before + omitted + config.marker.after + tail : outHead + tail;
  outHead = '';
  outTail = '';
  outTotal = 0;
  mirrorReset();
  return text;
}

function hostCall(op, payload) {
  const request = encode([op, payload]);
  const reply = ReflectApply(applySyncPromise, hostRef, [undefined, [request]]);
  if (typeof reply !== 'string') throw new $Error(op + ': the host gave no answer');
  const envelope = jsonParse(reply);
  if (envelope.ok === true) return envelope.value;
  throw new $Error(typeof envelope.error === 'string' ? envelope.error : op + ' failed');
}

function print() {
  let line = '';
  for (let i = 0; i < arguments.length; i++) {
    const a = arguments[i];
    line += (i === 0 ? '' : ' ') + (typeof a === 'string' ? a : show(a));
  }
  write(line + '\n');
}

function answerText(v) {
  if (typeof v === 'string') return v;
  let json;
  try {
    json = jsonStringify(v);
  } catch (e) {}
  return typeof json === 'string' ? json : show(v);
}

function FINAL(answer) {
  if (arguments.length === 0) throw new $TypeError('FINAL needs the answer: FINAL(answer)');
  finalAnswer = answerText(answer);
}

function FINAL_VAR(name) {
  if (typeof name !== 'string')
    throw new $TypeError('FINAL_VAR takes the variable name as a string: FINAL_VAR("answer")');
  if (!hasOwn(G, name)) throw new $Error('FINAL_VAR: no variable named ' + name);
  finalAnswer = answerText(G[name]);
}

function stringArg(v, what) {
  if (typeof v !== 'string') throw new $TypeError(what + ' must be a string');
  return v;
}

function plainOptions(opts, fn) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new $TypeError(fn + ': options must be an object');
  const out = {};
  const keys = objectKeys(opts);
  for (let i = 0; i < keys.length; i++) {
    const v = opts[keys[i]];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      out[keys[i]] = v;
    } else if (isArray(v)) {
      const list = [];
      for (let k = 0; k < v.length; k++) {
        const x = v[k];
        if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') list[list.length] = x;
      }
      out[keys[i]] = list;
    }
  }
  return out;
}

const unavailable = 'is unavailable: no model configured (pass --model)';

function subCallItem(x, fn, what) {
  if (typeof x === 'string') return { prompt: x };
  if (x === null || typeof x !== 'object')
    throw new $TypeError(fn + ': ' + what + ' must be a string or {prompt, context?, model?}');
  const prompt = x.prompt;
  if (typeof prompt !== 'string') throw new $TypeError(fn + ': ' + what + '.prompt must be a string');
  const item = { prompt: prompt };
  const c = x.context;
  if (c !== undefined && c !== null) item.context = typeof c === 'string' ? c : answerText(c);
  const m = x.model;
  if (m !== undefined && m !== null) item.model = stringArg(m, fn + ': ' + what + '.model');
  return item;
}

function single(op, fn, prompt, context, opts) {
  if (!config.llm) throw new $Error(fn + ' ' + unavailable);
  let item;
  if (prompt !== null && typeof prompt === 'object') item = subCallItem(prompt, fn, 'the request');
  else item = { prompt: stringArg(prompt, fn + '(prompt): prompt') };
  if (context !== undefined && context !== null)
    item.context = typeof context === 'string' ? context : answerText(context);
  if (opts !== undefined && opts !== null) {
    if (typeof opts !== 'object')
      throw new $TypeError(fn + '(prompt, context, {model}): options must be an object');
    const m = opts.model;
    if (m !== undefined && m !== null) item.model = stringArg(m, fn + ': model');
  }
  return hostCall(op, item);
}

function batched(op, fn, items) {
  if (!config.llm) throw new $Error(fn + ' ' + unavailable);
  if (!isArray(items))
    throw new $TypeError(fn + ' takes an array of prompts or {prompt, context?, model?} objects');
  const list = [];
  for (let i = 0; i < items.length; i++) list[i] = subCallItem(items[i], fn, 'item ' + i);
  return hostCall(op, { items: list });
}

function llm_query(prompt, context, opts) {
  return single('llm', 'llm_query', prompt, context, opts);
}

function rlm_query(prompt, context, opts) {
  return single('rlm', 'rlm_query', prompt, context, opts);
}

function llm_query_batched(items) {
  return batched('llm_batched', 'llm_query_batched', items);
}

function rlm_query_batched(items) {
  return batched('rlm_batched', 'rlm_query_batched', items);
}

function list_documents() {
  return hostCall('list_documents', {});
}

function noStore(fn) {
  return new $Error(
    fn + ' needs a chunk store, and none is loaded; use grep(pattern) and peek(start, end) on the context',
  );
}

function peek(a, b, c) {
  if (typeof a === 'number') {
    if (config.context === 'loaded') return peekLocal(a, b, c);
    if (config.context === 'none')
      throw new $Error(
        'peek(start, end): no context is loaded; use peek(chunkId) with ids from search_chunks or grep',
      );
    return hostCall('peek', {
      start: intArg(a, 0, 'start', 'peek'),
      end: intArg(b, a + PEEK_DEFAULT, 'end', 'peek'),
    });
  }
  const id = stringArg(a, 'peek(id): id');
  if (config.context === 'loaded' && !config.store) {
    const text = peekLocal(id, b, c);
    if (text === undefined)
      throw new $Error('peek: no document ' + id + '; ids are doc:0 to doc:' + (docs.length - 1));
    return text;
  }
  const payload = { id: id };
  if (b !== undefined && b !== null) payload.start = intArg(b, 0, 'start', 'peek');
  if (c !== undefined && c !== null) payload.end = intArg(c, 0, 'end', 'peek');
  return hostCall('peek', payload);
}

/** One "more matches" notice per block at most: a loop of greps must not flood the output. */
let grepNoticed = false;

function grepResult(matches, truncated, opts) {
  // A null-prototype descriptor: a literal would read get/set from a prototype model code may have poisoned.
  defineProperty(matches, 'truncated', descriptor(truncated === true, true, false, true));
  let limited = false;
  try {
    limited = opts !== null && typeof opts === 'object' && opts.limit !== undefined;
  } catch (e) {}
  if (truncated && !limited && !grepNoticed) {
    grepNoticed = true;
    write(
      '[grep: showing the first ' +
        matches.length +
        ' matches; the result has truncated = true. Pass {limit: N} for more]\n',
    );
  }
  return matches;
}

function grep(pattern, opts) {
  if (config.context === 'loaded' && !config.store) {
    const r = grepLocal(pattern, opts);
    return grepResult(r[0], r[1], opts);
  }
  if (!config.store && config.context === 'none') throw noStore('grep');
  const plan = grepPlan(pattern, opts);
  const payload = { pattern: plan.source, opts: plainOptions(opts, 'grep') };
  payload.opts.literal = plan.literal;
  payload.opts.ignoreCase = plan.ignoreCase;
  const r = hostCall('grep', payload);
  return grepResult(r.matches, r.truncated, opts);
}

function search_chunks(query, opts) {
  if (!config.store) throw noStore('search_chunks');
  return hostCall('search', {
    query: stringArg(query, 'search_chunks(query): query'),
    opts: plainOptions(opts, 'search_chunks'),
  });
}

function get_chunk(id) {
  if (!config.store) throw noStore('get_chunk');
  return hostCall('get_chunk', { id: stringArg(id, 'get_chunk(id): id') });
}

function neighbors(id, type) {
  if (!config.store) throw noStore('neighbors');
  const payload = { id: stringArg(id, 'neighbors(id): id') };
  if (type !== undefined && type !== null) payload.type = stringArg(type, 'neighbors(id, type): type');
  return hostCall('neighbors', payload);
}

function dir(v) {
  write(show(v) + '\n');
}

const consoleObject = freeze({
  log: print,
  info: print,
  debug: print,
  warn: print,
  error: print,
  trace: print,
  dir: dir,
  table: dir,
  assert: function assert(ok) {
    if (ok) return;
    let line = 'Assertion failed';
    for (let i = 1; i < arguments.length; i++)
      line += ' ' + (typeof arguments[i] === 'string' ? arguments[i] : show(arguments[i]));
    write(line + '\n');
  },
});

/** An error is a line for the model, not a channel around the output limit. */
const ERROR_NAME_MAX = 200;
const ERROR_MESSAGE_MAX = 2000;

function clipText(s, max) {
  return s.length <= max ? s : StringSlice(s, 0, max) + '… (' + (s.length - max) + ' more characters)';
}

function describeError(e, file) {
  let name = 'Error';
  let message = '';
  let stack = '';
  if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
    try {
      const n = e.name;
      if (typeof n === 'string') name = n;
    } catch (x) {}
    try {
      const m = e.message;
      if (typeof m === 'string') message = m;
    } catch (x) {}
    try {
      const s = e.stack;
      if (typeof s === 'string') stack = s;
    } catch (x) {}
    if (message === '' && stack === '') message = show(e);
  } else {
    name = 'Uncaught';
    message = show(e);
  }
  const error = {
    name: clipText(name, ERROR_NAME_MAX),
    message: clipText(message, ERROR_MESSAGE_MAX),
    line: 0,
    column: 0,
  };
  // The first frame in this block's file is where the model's code was when it failed.
  const at = StringIndexOf(stack, file + ':');
  if (at !== -1) {
    let i = at + file.length + 1;
    let line = 0;
    let column = 0;
    while (i < stack.length && StringCharCodeAt(stack, i) >= 48 && StringCharCodeAt(stack, i) <= 57)
      line = line * 10 + StringCharCodeAt(stack, i++) - 48;
    if (StringCharCodeAt(stack, i) === 58) {
      i++;
      while (i < stack.length && StringCharCodeAt(stack, i) >= 48 && StringCharCodeAt(stack, i) <= 57)
        column = column * 10 + StringCharCodeAt(stack, i++) - 48;
    }
    error.line = line;
    error.column = column;
  }
  return error;
}

/**
 * Shields. When a call into the isolate returns, isolated-vm looks at the promises rejected without a
 * handler during it and copies the reason of the first one to the host, reading its message, stack and
 * name — outside the CPU limit. A model's reason with a looping getter would run unbounded there, and
 * two in a row outlive even disposing the isolate (the first swallows the termination). So every entry
 * point first rejects a promise of its own, whose reason has no prototype and only data properties:
 * being first, it is the one copied, and the model's rejections are never read. Its message carries
 * the entry's result ("=" + JSON) once there is one; the host reads results from there (session.ts).
 * A few recent shields stay referenced: an entry stopped by the CPU limit skips that step, and the
 * next call's copy then finds the older shield first.
 */
const SHIELD_NAME = 'RlmShield';
const SHIELD_SLOTS = 4;
const shieldPromises = [null, null, null, null];
const shieldReasons = [null, null, null, null];
let shieldNext = 0;

function shieldOpen() {
  const reason = ObjectCreate(null);
  reason.name = SHIELD_NAME;
  reason.message = 'pending';
  reason.stack = '';
  shieldReasons[shieldNext] = reason;
  shieldPromises[shieldNext] = ReflectApply(PromiseReject, $Promise, [reason]);
  shieldNext = (shieldNext + 1) % SHIELD_SLOTS;
}

function shieldDeliver(text) {
  for (let i = 0; i < SHIELD_SLOTS; i++) if (shieldReasons[i] !== null) shieldReasons[i].message = '=' + text;
  return text;
}

/** Encoded once, while the built-ins are pristine: what goes back when a result cannot be encoded. */
const TOO_LARGE = encode({
  stdout: '',
  final: null,
  error: {
    name: 'RangeError',
    message: 'the block result is too large to return (a huge FINAL answer?)',
    line: 0,
    column: 0,
  },
  inGrep: false,
});

/**
 * Encodes and delivers an entry's result. Never throws: an exception leaving an entry point would be
 * copied by isolated-vm, stack included, and its stack text is built from prototypes model code owns.
 */
function deliver(result, fallback) {
  try {
    return shieldDeliver(encode(result));
  } catch (e) {
    return shieldDeliver(fallback);
  }
}

/** The last finished block's result, for when the host asks again (after the CPU limit stopped it). */
let lastResult = null;
/** Counts blocks, so a stale block's settlement is ignored. */
let blockSeq = 0;
const VAR_DESCRIPTOR = freeze(descriptor(undefined, true, true, false));
const INERT_CONSTRUCTOR = freeze(descriptor(undefined, false, false, false));

function finishBlock(seq, failed, outcome, file) {
  if (seq !== blockSeq || lastResult !== null) return;
  let error = null;
  try {
    if (failed) error = describeError(outcome, file);
    else if (outcome !== undefined) write(show(outcome) + '\n');
  } catch (e) {
    error = { name: 'Error', message: 'the block result could not be shown', line: 0, column: 0 };
  }
  lastResult = { stdout: takeOutput(), final: finalAnswer, error: error, inGrep: false };
  deliver(lastResult, TOO_LARGE);
}

/**
 * Runs one block: fn is the rewritten block (an async function of the global object), names the
 * JSON list of names it declares. Returns nothing: the result reaches the host through the shield, as
 * soon as the block settles — within this call, as everything a block awaits settles in its microtasks
 * (host calls are synchronous). A block still pending when the call returns never settles.
 */
function runBlock(fn, file, names) {
  shieldOpen();
  const seq = ++blockSeq;
  try {
    takeOutput();
    finalAnswer = null;
    grepRunning = false;
    grepNoticed = false;
    lastResult = null;
    // What a script-level var does, done here: the names become global properties, values kept.
    const list = jsonParse(names);
    for (let i = 0; i < list.length; i++) if (!hasOwn(G, list[i])) defineProperty(G, list[i], VAR_DESCRIPTOR);
    const p = ReflectApply(fn, G, [G]);
    // An own constructor of undefined makes then() use the intrinsic Promise instead of asking model
    // code (a getter on Promise.prototype.constructor); the captured then ignores a poisoned one.
    defineProperty(p, 'constructor', INERT_CONSTRUCTOR);
    ReflectApply(PromiseThen, p, [
      function (value) {
        finishBlock(seq, false, value, file);
      },
      function (e) {
        finishBlock(seq, true, e, file);
      },
    ]);
  } catch (e) {
    finishBlock(seq, true, e, file);
  }
}

/** What a block left behind when its result did not reach the host (CPU limit), or a flush. */
function collect() {
  shieldOpen();
  let result = TOO_LARGE;
  try {
    result =
      lastResult !== null
        ? lastResult
        : { stdout: takeOutput(), final: finalAnswer, error: null, inGrep: grepRunning };
  } catch (e) {}
  lastResult = null;
  grepRunning = false;
  return typeof result === 'string' ? shieldDeliver(result) : deliver(result, TOO_LARGE);
}

const NOT_FOUND = encode({ found: false, value: null });

function readVar(name) {
  shieldOpen();
  try {
    // A getter that throws, or loops until the CPU limit: no value. Nothing the model threw may reach
    // isolated-vm's copy.
    if (typeof name === 'string' && hasOwn(G, name))
      return deliver({ found: true, value: answerText(G[name]) }, NOT_FOUND);
  } catch (e) {}
  return shieldDeliver(NOT_FOUND);
}

/**
 * Second stage, run when a session takes this isolate: binds the host, the config and the documents,
 * installs the model's globals (read-only) and returns the host's entry points.
 */
function init(ref, configJson) {
  if (hostRef !== null) throw new $Error('already initialised');
  hostRef = ref;
  applySyncPromise = ref.applySyncPromise;
  config = jsonParse(configJson);
  headMax = MathCeil(config.maxOutputChars / 2);
  tailMax = config.maxOutputChars - headMax;
  for (let i = 2; i < arguments.length; i++) {
    docs[i - 2] = arguments[i];
    allowStringsOf(arguments[i].length);
  }
  const helpers = {
    context:
      config.context === 'loaded' ? (config.contextShape === 'string' ? docs[0] : freeze(docs)) : undefined,
    peek: peek,
    grep: grep,
    search_chunks: search_chunks,
    get_chunk: get_chunk,
    neighbors: neighbors,
    llm_query: llm_query,
    llm_query_batched: llm_query_batched,
    rlm_query: rlm_query,
    rlm_query_batched: rlm_query_batched,
    list_documents: list_documents,
    FINAL: FINAL,
    FINAL_VAR: FINAL_VAR,
    print: print,
    console: consoleObject,
  };
  const names = objectKeys(helpers);
  for (let i = 0; i < names.length; i++) {
    defineProperty(G, names[i], {
      value: helpers[names[i]],
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }
  return [runBlock, collect, readVar];
}
