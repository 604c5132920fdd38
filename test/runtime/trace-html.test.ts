import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTrace, type TraceEvent } from '../../src/runtime/trace.ts';
import { renderTraceHtml, scriptJson } from '../../src/runtime/trace-html.ts';
import { VIEWER_JS } from '../../src/runtime/trace-html-viewer.ts';
import { BrowserPage, chromiumPath } from '../helpers/chromium.ts';
import { tempDir } from '../helpers/temp.ts';
import { FnModel, lastUser, repl } from './helpers/fake-model.ts';
import { setup } from './helpers/setup.ts';

const dir = tempDir('rlm-trace-html-');

/** Model text that would run script if the page ever treated it as markup. */
const EVIL = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>';
const DEEP = 'DEEP-LEAF-OUTPUT-7731';

/** Root turn 1 prints, turn 2 asks a sub-RLM that asks a leaf, turn 3 answers. */
function model(): FnModel {
  return new FnModel((req) => {
    const last = lastUser(req);
    if (req.depth === 2) return `${DEEP} ${EVIL}`;
    if (req.depth === 1) {
      // The leaf's words stay in the leaf: only their length goes up.
      return last.includes('[block')
        ? 'FINAL(found it)'
        : repl('x = await llm_query("leaf: find it")\nprint(x.length)');
    }
    if (last.includes('[block 1') && last.includes('counted')) {
      return `Ask deeper ${EVIL}\n${repl('print(await rlm_query("sub: look " + "closer", "ctx ctx"))')}`;
    }
    if (last.includes('[block')) return 'FINAL(the answer is 42)';
    return repl(`const n = 3 // ${EVIL}\nprint("counted", n, ${JSON.stringify(EVIL)})`);
  });
}

async function traceOf(name: string): Promise<{ file: string; events: TraceEvent[] }> {
  const file = join(dir, `${name}.jsonl`);
  const { rlm } = setup(model(), { trace: file });
  const r = await rlm.answer({ question: `What is it? ${EVIL}`, context: 'some context' });
  expect(r.answer).toBe('the answer is 42');
  return { file, events: parseTrace(readFileSync(file, 'utf8')) };
}

describe('trace html page', () => {
  it('is one file with no external resource, and model text cannot close its script element', async () => {
    const { events } = await traceOf('static');
    const html = renderTraceHtml(events);
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    const markup = html.replace(/(<script type="application\/json" id="rlm-data">)[^<]*/, '$1');
    expect(markup).not.toContain(DEEP);
    expect(markup).not.toMatch(/<[^>]*\b(src|href)=/);
    expect(markup).toContain('<title>rlm trace: What is it? &lt;img src=x onerror=&quot;');
    expect(markup).not.toMatch(/https?:\/\/|url\(/);
    expect(html).toContain("default-src 'none'");
    expect(html).toContain(DEEP);
    expect(scriptJson({ a: '</script><!--' })).toBe('{"a":"\\u003c/script>\\u003c!--"}');
    expect(JSON.parse(scriptJson({ a: '</script>\u2028' }))).toEqual({ a: '</script>\u2028' });
    // The viewer is plain script: it compiles, and only DOM text setters put data on the page.
    expect(() => new vm.Script(VIEWER_JS)).not.toThrow();
    expect(VIEWER_JS).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });
});

const browser = chromiumPath();
const requireBrowser = process.env.RLM_REQUIRE_BROWSER === '1';
if (browser === undefined && !requireBrowser) {
  console.warn(
    'trace-html: SKIPPED the browser tests: no chromium on this machine (apt-get install -y chromium; .ci/run does)',
  );
}

/** 250 sub-RLMs that each ask one leaf: 500 sub-calls, in batches of 8 at a time. */
async function bigTrace(): Promise<TraceEvent[]> {
  const file = join(dir, 'big.jsonl');
  const model = new FnModel((req) => {
    const last = lastUser(req);
    if (req.depth === 2) return `leaf answer for ${last.slice(0, 20)}`;
    if (req.depth === 1) {
      return last.includes('[block') ? 'FINAL(sub done)' : repl('print(await llm_query("leaf " + context))');
    }
    if (last.includes('[block')) return 'FINAL(all done)';
    return repl(
      'const parts = Array.from({ length: 250 }, (_, i) => "part " + i)\nconst r = await Promise.all(parts.map((p) => rlm_query("look at " + p, p)))\nprint(r.length)',
    );
  });
  const { rlm } = setup(model, { trace: file });
  const r = await rlm.answer({ question: 'Big?', context: 'c' });
  expect(r.subCalls).toBe(500);
  return parseTrace(readFileSync(file, 'utf8'));
}

describe.skipIf(browser === undefined && !requireBrowser)('trace html in headless chromium', () => {
  let page: BrowserPage;
  let events: TraceEvent[];
  beforeAll(async () => {
    if (browser === undefined) throw new Error('RLM_REQUIRE_BROWSER=1 but no chromium is installed');
    events = (await traceOf('browser')).events;
    const file = join(dir, 'browser.html');
    writeFileSync(file, renderTraceHtml(events));
    page = await BrowserPage.launch(browser);
    await page.open(file);
  });
  afterAll(async () => {
    await page?.close();
  });

  const text = () => page.evaluate<string>('document.body.innerText');
  const click = (selector: string) =>
    page.evaluate<boolean>(
      `(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return false; e.click(); return true; })()`,
    );
  /** A branch fills itself on its `toggle` event, which the page dispatches after the click returns. */
  const filled = (key: string) =>
    page.waitFor(`document.querySelector('details[data-key="${key}"] > .body')`);

  it('renders the question, the answer, totals and the timeline, fetching nothing', async () => {
    expect(await page.evaluate('document.querySelector(".qa.answer").textContent')).toBe('the answer is 42');
    expect(await page.evaluate('document.querySelector(".qa").textContent')).toBe(`What is it? ${EVIL}`);
    const body = await text();
    expect(body).toMatch(/status\s+final/);
    expect(body).toMatch(/sub-calls\s+2/);
    // Each time says what it measures: the whole call, and the run (root node and timeline alike).
    expect(body).toMatch(/total time\s+\d/);
    expect(body).toMatch(/run time\s+\d/);
    expect(body).toMatch(/finalrun \d/); // the root node's time is the run's
    expect(body).toMatch(/sub-calls over the run’s \d/i);
    expect(await page.evaluate('document.querySelector(".stats span[title]").title')).toContain(
      'the whole call',
    );
    expect(await page.evaluate('document.querySelectorAll(".tl-bar").length')).toBe(2);
    expect(await page.evaluate('performance.getEntriesByType("resource").length')).toBe(0);
  });

  it('shows model text as text: nothing it holds becomes an element or runs', async () => {
    // The root's turns are open: the first block's code and output hold EVIL.
    const body = await text();
    expect(body).toContain('window.__pwned=2');
    expect(await page.evaluate('document.querySelectorAll("img").length')).toBe(0);
    expect(await page.evaluate('document.scripts.length')).toBe(2);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    // The code is highlighted: keywords and rlm functions in their own spans.
    const kinds = await page.evaluate<string[]>(
      'Array.from(document.querySelectorAll("pre.code span")).map((s) => s.className + ":" + s.textContent)',
    );
    expect(kinds).toEqual(expect.arrayContaining(['tk-k:const', 'tk-f:print', 'tk-n:3', 'tk-f:rlm_query']));
    expect(kinds.some((k) => k.startsWith('tk-c://'))).toBe(true);
  });

  it('expands the tree on click, down to a depth-2 sub-call whose output is whole', async () => {
    // Rendered lazily: the deep output is not in the page until its branch is opened.
    expect(
      await page.evaluate(`document.getElementById('app').textContent.includes(${JSON.stringify(DEEP)})`),
    ).toBe(false);
    expect(await page.evaluate('document.querySelector("details[data-key=s1] > .body")')).toBeNull();
    expect(await click('details[data-key=s1] > summary')).toBe(true);
    await filled('s1');
    expect(await page.evaluate('document.querySelector("details[data-key=s1]").open')).toBe(true);
    expect(await click('details[data-key="s1/t0"] > summary')).toBe(true);
    await filled('s1/t0');
    expect(await click('details[data-key=s2] > summary')).toBe(true);
    await filled('s2');
    expect(await click('details[data-key="s2/t0"] > summary')).toBe(true);
    await filled('s2/t0');
    const leaf = await page.evaluate<string>('document.querySelector("details[data-key=s2]").innerText');
    expect(leaf).toContain(`${DEEP} ${EVIL}`);
    expect(leaf).toContain('leaf: find it');
    expect(
      await page.evaluate('document.querySelector("details[data-key=s2]").classList.contains("d2")'),
    ).toBe(true);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
  });

  it('finds text anywhere in the run and reveals it', async () => {
    await click('#top button:last-of-type'); // collapse all: the page renders again within the click
    expect(
      await page.evaluate(`document.getElementById('app').textContent.includes(${JSON.stringify(DEEP)})`),
    ).toBe(false);
    await page.evaluate(
      `(() => { const i = document.getElementById('search'); i.value = ${JSON.stringify(DEEP.toLowerCase())}; i.dispatchEvent(new Event('input')); })()`,
    );
    // The search runs once typing pauses (a debounce): wait for its results.
    const hits = await page.waitFor<string[]>(
      '(() => { const h = Array.from(document.querySelectorAll("#results .hit")).map((h) => h.textContent); return h.length > 0 && h; })()',
    );
    expect(hits[0]).toContain('s2 (depth 2)');
    await click('#results .hit');
    await filled('s2');
    expect(await page.evaluate('document.querySelector("details[data-key=s2]").open')).toBe(true);
    const marks = await page.evaluate<string[]>(
      'Array.from(document.querySelectorAll("details[data-key=s2] mark")).map((m) => m.textContent)',
    );
    expect(marks).toContain(DEEP);
  });

  it('shows the last run of a shared file and switches runs with the picker', async () => {
    const file = join(dir, 'shared.jsonl');
    const { rlm } = setup(new FnModel((req) => `FINAL(answer to ${lastUser(req).split('\n')[0]})`), {
      trace: file,
    });
    await rlm.answer({ question: 'first run', context: 'c' });
    await rlm.answer({ question: 'second run', context: 'c' });
    const html = join(dir, 'shared.html');
    writeFileSync(html, renderTraceHtml(parseTrace(readFileSync(file, 'utf8'))));
    await page.open(html);
    const answer = () => page.evaluate<string>('document.querySelector(".qa.answer").textContent');
    expect(await page.evaluate('document.querySelectorAll("#run option").length')).toBe(2);
    expect(await answer()).toMatch(/^answer to second run/);
    await page.evaluate(
      '(() => { const s = document.getElementById("run"); s.value = "0"; s.dispatchEvent(new Event("change")); })()',
    );
    expect(await answer()).toMatch(/^answer to first run/);
  });
});

describe.skipIf(browser === undefined && !requireBrowser)('trace html of a run with 500 sub-calls', () => {
  it('draws every sub-call on the timeline but renders tree nodes only when opened', async () => {
    if (browser === undefined) throw new Error('RLM_REQUIRE_BROWSER=1 but no chromium is installed');
    const file = join(dir, 'big.html');
    writeFileSync(file, renderTraceHtml(await bigTrace()));
    const page = await BrowserPage.launch(browser);
    try {
      await page.open(file);
      expect(await page.evaluate('document.querySelectorAll(".tl-bar").length')).toBe(500);
      expect(await page.evaluate('document.querySelectorAll(".tl-bar.d2").length')).toBe(250);
      // The root's block lists its 250 sub-RLMs, closed; nothing below them exists yet.
      expect(await page.evaluate('document.querySelectorAll("details.span.d1").length')).toBe(250);
      expect(await page.evaluate('document.querySelectorAll("details.span.d2").length')).toBe(0);
      expect(await page.evaluate('document.querySelectorAll("#app *").length')).toBeLessThan(5000);
      // Clicking a bar of the timeline opens the way to that sub-call.
      await page.evaluate('document.querySelector(".tl-bar.d2").click()');
      const opened = await page.evaluate<string>(
        'Array.from(document.querySelectorAll("details.span.d2[open]")).map((d) => d.dataset.key).join()',
      );
      expect(opened).toMatch(/^s\d+$/);
      expect(await page.evaluate(`document.querySelector("details[data-key=${opened}]").innerText`)).toMatch(
        /leaf answer for leaf part \d+/,
      );
    } finally {
      await page.close();
    }
  });
});
