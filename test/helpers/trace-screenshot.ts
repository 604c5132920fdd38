/**
 * Makes the README's picture of `rlm trace html`: a scripted but real-looking run (the real isolated-vm
 * sandbox; several root turns; sub-RLMs at depth 1, each asking a leaf at depth 2, running concurrently),
 * rendered to a page and photographed in headless Chromium.
 *
 *   node --no-node-snapshot test/helpers/trace-screenshot.ts /tmp/shot.png
 *   pngquant --quality 70-90 --output docs/trace-html.png --force /tmp/shot.png   # to keep it small
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RLM } from '../../src/runtime/rlm.ts';
import { parseTrace } from '../../src/runtime/trace.ts';
import { renderTraceHtml } from '../../src/runtime/trace-html.ts';
import { FnModel, lastUser, repl } from '../runtime/helpers/fake-model.ts';
import { BrowserPage, chromiumPath } from './chromium.ts';

const CAUSES = [
  'a misconfigured load balancer health check',
  'disk exhaustion on the primary database',
  'a bad feature-flag rollout',
  'a DNS resolver outage at the cloud provider',
  'a memory leak in the session service',
  'a saturated message queue',
];
const TLS: Record<number, string> = {
  21: 'an expired TLS certificate on api-gateway',
  37: 'an expired TLS certificate on the billing webhook endpoint',
};

/** 40 incident reports; two (INC-2291, INC-2307) were caused by expired certificates. */
function incidents(): string {
  const out: string[] = [];
  for (let i = 0; i < 40; i++) {
    const minutes = 12 + ((i * 37) % 90);
    out.push(
      `## Incident INC-${2270 + i}\nDate: 2025-0${1 + (i % 9)}-${String(1 + ((i * 7) % 28)).padStart(2, '0')}\n` +
        `Impact: customers saw errors for ${minutes} minutes.\nRoot cause: ${TLS[i] ?? CAUSES[(i * 5) % 6]}.\n` +
        `Follow-up: ${i % 2 ? 'add an alert and a runbook entry' : 'postmortem scheduled with the owning team'}.\n`,
    );
  }
  return out.join('\n');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rootReply(turn: number): string {
  if (turn === 1) {
    return `I'll look at the shape of the context first.\n${repl(
      "print(context.length)\nprint(peek(0, 300))\nconst heads = grep('## Incident', { limit: 100 })\nprint(heads.length, 'incidents')",
    )}`;
  }
  if (turn === 2) {
    return `There are 40 incident reports. I'll split them into four batches and ask a sub-model about each.\n${repl(
      "const sections = context.split(/\\n(?=## Incident)/)\nconst batches = [0, 1, 2, 3].map((b) => sections.slice(b * 10, b * 10 + 10).join('\\n'))\nconst found = await rlm_query_batched(batches.map((b) => 'Which of these incidents were caused by an expired TLS certificate? Give each id and how long its outage lasted, or say none.\\n\\n' + b))\nprint(found.map((f, i) => 'batch ' + i + ': ' + f).join('\\n'))",
    )}`;
  }
  if (turn === 3) {
    return `Two candidates. Let me check them against the source before answering.\n${repl(
      "for (const id of ['INC-2291', 'INC-2307']) {\n  const at = context.indexOf('## Incident ' + id)\n  print(peek(at, context.indexOf('Follow-up', at)))\n}",
    )}`;
  }
  return 'Both are confirmed by the reports.\nFINAL(Two incidents were caused by expired TLS certificates: INC-2291 (api-gateway, 69 minutes) and INC-2307 (billing webhook, 31 minutes).)';
}

function subReply(req: { messages: { content: string }[] }): string {
  const first = req.messages[0]?.content ?? '';
  const report = /## Incident (INC-\d+)[^#]*?expired TLS certificate[^#]*?Follow-up[^\n]*/.exec(first);
  if (req.messages.length > 1) return 'FINAL_VAR(answer)';
  if (report === null) return 'None of these incidents mentions an expired certificate.\nFINAL(none)';
  return `${report[1]} was caused by an expired certificate. Let me get the exact outage length from its report.\n${repl(
    `const report = ${JSON.stringify(report[0])}\nconst answer = await llm_query('How long was the outage? Reply as: ID: N minutes (cause).', report)\nprint(answer)`,
  )}`;
}

function leafReply(text: string): string {
  const id = /INC-\d+/.exec(text)?.[0] ?? '?';
  const minutes = /for (\d+) minutes/.exec(text)?.[1] ?? '?';
  const cause = /Root cause: ([^.\n]*)/.exec(text)?.[1] ?? '?';
  return `${id}: ${minutes} minutes (${cause})`;
}

export async function main(out: string): Promise<void> {
  const binary = chromiumPath();
  if (binary === undefined) throw new Error('no chromium: apt-get install -y chromium');
  const dir = mkdtempSync(join(tmpdir(), 'rlm-shot-'));
  try {
    const trace = join(dir, 'run.jsonl');
    let n = 0;
    const root = new FnModel(async (req) => {
      await sleep(400 + (n++ % 3) * 250);
      return rootReply((req.messages.length + 1) / 2);
    }, 'anthropic:claude-sonnet-4-6');
    const sub = new FnModel(async (req) => {
      const last = lastUser(req);
      if (req.depth === 2) {
        await sleep(700);
        return leafReply(last);
      }
      await sleep(600 + ((last.length * 7) % 900));
      return subReply(req);
    }, 'anthropic:claude-haiku-4-5');
    const rlm = new RLM({ model: root, subModel: sub, trace, env: {} });
    const result = await rlm.answer({
      question:
        'Which incidents were caused by an expired TLS certificate, and how long did each outage last?',
      context: incidents(),
    });
    const page = join(dir, 'run.html');
    writeFileSync(page, renderTraceHtml(parseTrace(readFileSync(trace, 'utf8'))));
    const browser = await BrowserPage.launch(binary, 1000, 1640);
    try {
      await browser.open(page);
      // Open the sub-RLM that found INC-2291 and the leaf below it, as a reader would.
      const leaf = await browser.evaluate<string>(
        "(() => { const subs = window.rlmTrace.data.runs[0].root.turns[1].blocks[0].subcalls; return subs.find((x) => x.answer.includes('INC-2291')).turns[0].blocks[0].subcalls[0].id; })()",
      );
      await browser.evaluate(`window.rlmTrace.reveal(${JSON.stringify(leaf)})`);
      await browser.evaluate(
        `(() => { for (const k of ['root/t0', 'root/t2', 'root/t3']) document.querySelector('details[data-key="' + k + '"]').open = false; window.scrollTo(0, 0); })()`,
      );
      // Past the highlight animation of the revealed node.
      await browser.evaluate('new Promise((r) => setTimeout(r, 1800))');
      writeFileSync(out, await browser.screenshot());
    } finally {
      await browser.close();
    }
    console.log(`${result.status}: ${result.answer}\n${result.subCalls} sub-calls; wrote ${out}`);
  } finally {
    if (process.env.KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    else console.log(dir);
  }
}

if (process.argv[1]?.endsWith('trace-screenshot.ts')) await main(process.argv[2] ?? 'trace-html.png');
