/**
 * Issue 30, from the model's seat: scripted models write what a model wrote on the played tasks
 * (changelogs, a dpkg database, man pages), through the real loop, sandbox and stores, and each test
 * checks what the model got back. One test per problem the played runs met.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChunkStore } from '../../memory/files/store.ts';
import type { Model, ModelRequest, ModelResponse } from '../../src/runtime/model.ts';
import { ScriptedModel, type ScriptRule } from '../../src/runtime/providers/scripted.ts';
import { RLM } from '../../src/runtime/rlm.ts';
import { repl } from './helpers/fake-model.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rlm-seat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A scripted model that keeps every request, so a test can read what the model was shown. */
class Seat implements Model {
  readonly spec = 'scripted';
  readonly requests: ModelRequest[] = [];
  readonly #inner: ScriptedModel;
  constructor(rules: ScriptRule[]) {
    this.#inner = new ScriptedModel(rules, { countTokens: (t) => Math.ceil(t.length / 4) });
  }
  complete(req: ModelRequest): Promise<ModelResponse> {
    this.requests.push(req);
    return this.#inner.complete(req);
  }
  /** The feedback the model got after its turn `n` (1-based) at depth 0. */
  feedback(n: number): string {
    const req = this.requests.filter((r) => r.depth === 0)[n];
    return req?.messages.at(-1)?.content ?? '';
  }
}

function folder(name: string, files: Record<string, string | Buffer>): string {
  const root = path.join(dir, name);
  mkdirSync(root, { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(root, file), content);
  return root;
}

/** A Debian-style changelog: `entries` entries, each ending in a signature line (non-ASCII names). */
function changelog(pkg: string, entries: number): string {
  const out: string[] = [];
  for (let i = entries; i > 0; i--) {
    out.push(
      `${pkg} (1.${i}-1) unstable; urgency=medium\n\n` +
        `  * Fix bug number ${i} in ${pkg}, which broke the parser on long lines.\n` +
        `  * Update the translations.\n\n` +
        ` -- Jörg Müller <jm${i}@example.org>  Mon, 0${(i % 9) + 1} Jan 2024 10:00:00 +0100\n`,
    );
  }
  return out.join('\n');
}

describe('reading what a hit points to', () => {
  it('grep context reaches the signature line across chunk edges; offsets lead to the text', async () => {
    const root = folder('changelogs', { 'tzdata.changelog': changelog('tzdata', 120) });
    const seat = new Seat([
      {
        depth: 0,
        match: 'Which maintainer',
        reply: repl(
          [
            "const hit = grep('Fix bug number 57 ', { context: 600 })[0];",
            'const chunk = get_chunk(hit.id);',
            "const signature = hit.after.split('\\n').find((l) => l.startsWith(' -- '));",
            'print(JSON.stringify({ before: hit.before.length, after: hit.after.length, signature }));',
            'print(chunk.start + hit.offset === hit.documentOffset, context.slice(hit.documentOffset, hit.documentOffset + 17));',
          ].join('\n'),
        ),
      },
      {
        depth: 0,
        match: 'jm57@',
        reply: 'The entry is signed by Jörg Müller <jm57@example.org>.\nFINAL("jm57@example.org")',
      },
    ]);
    const r = await new RLM({ model: seat, env: {} }).answer({
      question: 'Which maintainer signed the entry that fixed bug number 57?',
      paths: [root],
    });
    expect(r).toMatchObject({ status: 'final', answer: 'jm57@example.org' });
    const out = seat.feedback(1);
    // 600 characters either side, not "322 before and 2 after": the signature line is in reach.
    expect(out).toContain('"before":600,"after":600,"signature":" -- Jörg Müller <jm57@example.org>');
    expect(out).toContain('true Fix bug number 57');
    // --context files are grepped whole, by document (their index is built only for the chunk functions).
    expect(seat.requests[0]?.system).toContain("`id` (= `document`) is the file's document id");
  });

  it('list_documents() counts chars as JavaScript does, and the header total is their sum', async () => {
    const a = changelog('tzdata', 40);
    const b = changelog('dpkg', 25);
    const root = folder('lengths', { 'a.changelog': a, 'b.changelog': b });
    expect(Buffer.byteLength(a)).not.toBe(a.length);
    const seat = new Seat([
      {
        depth: 0,
        match: 'How long',
        reply: repl(
          [
            'const docs = list_documents();',
            "print(docs.map((d) => d.chars + '=' + context[docs.indexOf(d)].length).join(' '));",
          ].join('\n'),
        ),
      },
      { depth: 0, reply: 'FINAL("measured")' },
    ]);
    await new RLM({ model: seat, env: {} }).answer({ question: 'How long are they?', paths: [root] });
    expect(seat.feedback(1)).toContain(`${a.length}=${a.length} ${b.length}=${b.length}`);
    const total = (a.length + b.length).toLocaleString('en-US');
    expect(seat.requests[0]?.system).toContain(`${total} characters`);
    expect(seat.requests[0]?.system).toContain(`(${a.length.toLocaleString('en-US')} chars)`);
  });
});

describe('counting and coverage', () => {
  it('counts entries past the 100-match default, per document, in one grep', async () => {
    const root = folder('three', {
      'a.changelog': changelog('alpha', 140),
      'b.changelog': changelog('beta', 180),
      'c.changelog': changelog('gamma', 101),
    });
    const seat = new Seat([
      {
        depth: 0,
        match: 'most entries',
        reply: repl(
          [
            "const listed = grep('^\\\\S+ \\\\(\\\\S+\\\\) unstable');",
            'print(listed.length, listed.truncated);',
            "const counted = grep('^\\\\S+ \\\\(\\\\S+\\\\) unstable', { count: true });",
            "print(counted.matches, counted.documents.map((d) => d.path + ':' + d.matches).join(' '));",
            'const top = counted.documents.reduce((a, b) => (b.matches > a.matches ? b : a));',
          ].join('\n'),
        ),
      },
      { depth: 0, match: '421 ', reply: repl('FINAL(top.path.split("/").pop() + " " + top.matches)') },
    ]);
    const r = await new RLM({ model: seat, env: {} }).answer({
      question: 'Which changelog has the most entries, and how many?',
      paths: [root],
    });
    expect(r).toMatchObject({ status: 'final', answer: 'b.changelog 180' });
    const out = seat.feedback(1);
    // A listing stops at 100 and says so; the count does not stop.
    expect(out).toContain('100 true');
    expect(out).toMatch(/421 \S*a\.changelog:140 \S*b\.changelog:180 \S*c\.changelog:101/);
  });

  it('counts 120,000 matches of one pattern in a loaded text, with no cap', async () => {
    const text = 'ERR-1234 disk\nok\nERR-5678 net and ERR-9999\n'.repeat(40_000);
    const seat = new Seat([
      {
        depth: 0,
        match: 'How many error codes',
        reply: repl(
          "const c = grep('ERR-\\\\d{4}', { count: true });\nFINAL(c.matches + ' in ' + c.lines + ' lines')",
        ),
      },
    ]);
    const r = await new RLM({ model: seat, env: {} }).answer({
      question: 'How many error codes?',
      context: text,
    });
    expect(r).toMatchObject({ status: 'final', answer: '120000 in 80000 lines' });
  });

  it('tells identical documents apart, and says what was left out', async () => {
    const page = '.TH LS 1\n.SH NAME\nls \\- list directory contents\n';
    const root = folder('man', {
      'ls.1': page,
      'dir.1': page,
      'cp.1': '.TH CP 1\n.SH NAME\ncp \\- copy files\n',
      'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
    });
    const seat = new Seat([
      {
        depth: 0,
        match: 'How many different',
        reply: repl(
          "const docs = list_documents();\nprint(docs.map((d) => d.path.split('/').pop() + (d.duplicateOf ? ' = ' + d.duplicateOf : '')).join(', '));\nFINAL(docs.filter((d) => !d.duplicateOf).length)",
        ),
      },
    ]);
    const r = await new RLM({ model: seat, env: {} }).answer({
      question: 'How many different man pages are there?',
      paths: [root],
    });
    expect(r).toMatchObject({ status: 'final', answer: '2' });
    const system = seat.requests[0]?.system ?? '';
    expect(system).toContain(
      '1 document has the same text as an earlier one (`duplicateOf` in list_documents()).',
    );
    expect(system).toContain('Left out of the context: 1 binary file (logo.png).');
  });

  it('describes a flat file of records by its first lines and recurring fields, not only its chunks', async () => {
    const status = Array.from(
      { length: 300 },
      (_, i) => `Package: pkg${i}\nStatus: install ok installed\nVersion: ${i}.0\nDescription: tool ${i}\n`,
    ).join('\n');
    const root = folder('dpkg', { status });
    const seat = new Seat([{ depth: 0, reply: repl("FINAL(context.split('\\n\\n').length)") }]);
    const r = await new RLM({ model: seat, env: {} }).answer({
      question: 'How many packages?',
      paths: [root],
    });
    expect(r.answer).toBe('300');
    const system = seat.requests[0]?.system ?? '';
    expect(system).toContain('It begins:\n````\nPackage: pkg0\nStatus: install ok installed\nVersion: 0.0');
    expect(system).toContain(
      'In all: 299 blank-line breaks, 300 lines starting `Package:`, 300 lines starting `Status:`',
    );
  });
});

describe('mistakes that must not pass silently', () => {
  it('the host-call limit advises what fits the function that hit it', async () => {
    const root = folder('limit', { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
    const seat = new Seat([
      {
        depth: 0,
        match: 'Which documents',
        reply: repl('let n = 0;\nfor (let i = 0; i < 50; i++) n += list_documents().length;\nprint(n)'),
      },
      { depth: 0, reply: repl('const docs = list_documents();\nFINAL(docs.length)') },
    ]);
    const r = await new RLM({ model: seat, env: {}, sandbox: { maxHostCalls: 10 } }).answer({
      question: 'Which documents are there?',
      paths: [root],
    });
    expect(r.answer).toBe('2');
    expect(seat.feedback(1)).toContain(
      'list_documents: host call limit reached (10 per block); call list_documents() once and keep the result in a variable',
    );
  });

  it('context in store mode says what to use; a failed llm_query is an "Error:" string and a notice', async () => {
    const storeDir = path.join(dir, 'store');
    const store = await ChunkStore.open(storeDir, { create: true });
    await store.ingestText('notes', 'The launch is on Tuesday.\n', { path: '/notes.md' });
    await store.close();
    const seat = new Seat([
      { depth: 0, match: 'When is', reply: repl('print(context.length)') },
      {
        depth: 0,
        match: 'not loaded',
        reply: repl("const a = llm_query('When?', 'text', { model: 'nope' });\nprint(typeof a)"),
      },
      { depth: 0, reply: 'FINAL("Tuesday")' },
    ]);
    const r = await new RLM({ model: seat, env: {} }).answer({
      question: 'When is the launch?',
      store: storeDir,
    });
    expect(r.answer).toBe('Tuesday');
    expect(seat.feedback(1)).toContain(
      'context is not loaded: the text is in a chunk store. Use list_documents(), peek(DOC_ID) or peek(DOC_ID, start, end), grep and search_chunks',
    );
    const second = seat.feedback(2);
    expect(second).toContain(
      '[llm_query: a call failed; its answer is the string "Error: BAD_INPUT: no model \\"nope\\" is configured',
    );
    expect(second).toContain('string');
  });
});

describe('sub-calls over many records', () => {
  it('structured output: checked values, one retry, failures visible to the code that asked', async () => {
    const records = ['ssh: secure shell daemon', 'cowsay: talking cow', 'nginx: web server'];
    const seat = new Seat([
      // The sub-model: JSON at once (cowsay), prose then JSON when told (ssh), prose every time (nginx).
      // A retry's last message quotes the reply it is about, which is what these rules match on.
      { depth: 1, match: 'Sure! ssh', reply: '[{"name":"ssh","network":true}]' },
      { depth: 1, match: 'talking cow', reply: '[{"name":"cowsay","network":false}]' },
      { depth: 1, match: 'ssh: secure', reply: 'Sure! ssh is a network service.' },
      { depth: 1, reply: 'nginx serves the web.' },
      {
        depth: 0,
        match: 'Which of these',
        reply: repl(
          [
            "const schema = { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, network: { type: 'boolean' } }, required: ['name', 'network'] } };",
            'const records = ' + JSON.stringify(records) + ';',
            "const answers = llm_query_batched(records.map((r) => ({ prompt: 'Is it a network service? One object per record.', context: r, schema })));",
            'print(JSON.stringify(answers), JSON.stringify(answers.errors.map((e) => e.index)));',
            "try { llm_query('Again?', records[2], { schema }); } catch (e) { print('threw:', e.message.slice(0, 60)); }",
          ].join('\n'),
        ),
      },
      { depth: 0, reply: 'FINAL("ssh")' },
    ]);
    const r = await new RLM({ model: seat, env: {}, maxDepth: 1 }).answer({
      question: 'Which of these are network services?',
      context: records.join('\n'),
    });
    expect(r.answer).toBe('ssh');
    const out = seat.feedback(1);
    expect(out).toContain('[[{"name":"ssh","network":true}],[{"name":"cowsay","network":false}],null] [2]');
    expect(out).toContain('[llm_query_batched: 1 of 3 calls failed; .errors lists {index, error}]');
    expect(out).toContain("threw: llm_query: BAD_OUTPUT: the sub-model's reply did not match");
    // The sub-model was told the schema, and what was wrong the first time.
    const leaf = seat.requests.filter((q) => q.depth === 1);
    expect(leaf[0]?.messages[0]?.content).toContain('Reply with JSON only: no prose and no code fence.');
    const retry = leaf.find((q) => q.messages.length === 3);
    expect(retry?.messages[2]?.content).toMatch(/^Your reply did not match the schema: it is not JSON/);
  });

  it('a sub-RLM asked for a schema gets one more turn when its FINAL does not fit', async () => {
    const seat = new Seat([
      // The sub-RLM answers in prose first, then in JSON once told.
      { depth: 1, match: 'does not match the JSON Schema', reply: 'FINAL("[3, 5]")' },
      { depth: 1, reply: 'The odd ones are 3 and 5.\nFINAL("3 and 5")' },
      {
        depth: 0,
        match: 'odd numbers',
        reply: repl(
          "const odd = rlm_query('Which numbers are odd?', '2 3 4 5', { schema: { type: 'array', items: { type: 'integer' } } });\nprint(JSON.stringify(odd), odd.length)",
        ),
      },
      { depth: 0, reply: 'FINAL("3, 5")' },
    ]);
    const r = await new RLM({ model: seat, env: {}, maxDepth: 2 }).answer({
      question: 'Which are the odd numbers?',
      context: '2 3 4 5',
    });
    expect(r.answer).toBe('3, 5');
    expect(seat.feedback(1)).toContain('[3,5] 2');
    const sub = seat.requests.filter((q) => q.depth === 1);
    expect(sub[0]?.messages[0]?.content).toContain('Reply with JSON only: no prose and no code fence.');
    expect(sub[1]?.messages.at(-1)?.content).toContain(
      'FINAL: the answer does not match the JSON Schema the request asked for: it is not JSON',
    );
  });
});
