/**
 * The script inlined into `rlm trace html` pages. The script reads the JSON the page
 * carries and builds the view with DOM calls only (`textContent`, never `innerHTML`), so model text is
 * shown, never interpreted. Nodes render when first opened, which keeps a run of hundreds of sub-calls
 * quick to open. Plain ES2017 in a string: it runs in the browser, not in Node, and must not contain a
 * backtick or a dollar-brace.
 */

export const VIEWER_JS = String.raw`
(function () {
  'use strict';
  var T0 = performance.now();
  var DATA = JSON.parse(document.getElementById('rlm-data').textContent);
  var runIndex = DATA.runs.length - 1;
  var query = '';
  var openKeys = new Set(['root']);
  var closedKeys = new Set();
  var els = new Map();
  var index = new Map();

  function fmtInt(n) { return Math.round(n || 0).toLocaleString('en-US'); }
  function fmtMs(ms) {
    if (ms == null || isNaN(ms)) return '?';
    if (ms < 1000) return Math.round(ms) + 'ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + 's';
    var s = Math.round(ms / 1000);
    return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
  }
  function fmtUsd(u) { return !u ? '$0' : u < 0.01 ? '$' + u.toFixed(4) : '$' + u.toFixed(2); }
  function oneLine(s, n) { s = String(s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; }

  function textInto(el, text) {
    text = String(text);
    if (!query) { el.appendChild(document.createTextNode(text)); return; }
    var low = text.toLowerCase(), q = query.toLowerCase(), i = 0, j;
    while ((j = low.indexOf(q, i)) !== -1) {
      if (j > i) el.appendChild(document.createTextNode(text.slice(i, j)));
      var m = document.createElement('mark');
      m.textContent = text.slice(j, j + q.length);
      el.appendChild(m);
      i = j + q.length;
    }
    if (i < text.length) el.appendChild(document.createTextNode(text.slice(i)));
  }
  function h(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) textInto(e, text);
    return e;
  }
  function pre(text, cls) { return h('pre', cls || '', text === '' ? '(empty)' : text); }

  var KW = new Set('await async break case catch class const continue default delete do else export extends false finally for function if import in instanceof let new null of return switch this throw true try typeof undefined var void while yield'.split(' '));
  var FN = new Set('llm_query llm_query_batched rlm_query rlm_query_batched FINAL FINAL_VAR print peek grep search_chunks get_chunk neighbors list_documents context console'.split(' '));
  var TOKEN = /(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?|\x60(?:[^\x60\\]|\\[\s\S])*\x60?)|(\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_$][\w$]*)/g;
  function highlight(code) {
    var el = h('pre', 'code');
    var last = 0, m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(code))) {
      if (m.index > last) textInto(el, code.slice(last, m.index));
      var cls = m[1] ? 'c' : m[2] ? 's' : m[3] ? 'n' : KW.has(m[4]) ? 'k' : FN.has(m[4]) ? 'f' : '';
      if (cls) { var sp = h('span', 'tk-' + cls); textInto(sp, m[0]); el.appendChild(sp); } else textInto(el, m[0]);
      last = TOKEN.lastIndex;
    }
    if (last < code.length) textInto(el, code.slice(last));
    return el;
  }

  function statusClass(s) { return s === 'final' || s === 'ok' || s === 'cached' ? 'ok' : s === 'error' || s === 'aborted' || s === 'budget' ? 'bad' : 'warn'; }
  function turnLabel(t) { return t.kind === 'leaf' ? 'completion' : t.kind === 'last_call' ? 'last call' : 'turn ' + t.iteration; }
  function spanDur(s, run) { var end = s.endMs != null ? s.endMs : run.root.endMs; return end - s.startMs; }

  // Every node by key, with its parent and the texts search looks at.
  function buildIndex(run) {
    index = new Map();
    function span(s, parent, where) {
      index.set(s.id, { kind: 'span', node: s, parent: parent, where: where, texts: [s.prompt, s.answer, s.final && s.final.answer].concat(s.errors.map(function (e) { return e.message; })) });
      s.turns.forEach(function (t, ti) {
        var tk = s.id + '/t' + ti;
        var msgs = t.request ? t.request.messages.map(function (m) { return m.content; }) : [];
        index.set(tk, { kind: 'turn', node: t, parent: s.id, where: where + ' \u203A ' + turnLabel(t), texts: [t.reply].concat(msgs) });
        t.blocks.forEach(function (b, bi) {
          var bk = tk + '/b' + bi;
          var o = b.output || {};
          index.set(bk, { kind: 'block', node: b, parent: tk, where: where + ' \u203A ' + turnLabel(t) + ' \u203A block ' + b.index, texts: [b.code, o.stdout, o.error && o.error.message, o.final] });
          b.subcalls.forEach(function (c) { span(c, bk, c.id + ' (depth ' + c.depth + ')'); });
        });
      });
    }
    span(run.root, null, 'root');
  }

  // Open state survives re-rendering (search, expand all): nodes open by default (the root's turns)
  // stay open unless closed by hand, others stay closed unless opened.
  function isOpen(key, byDefault) { return byDefault ? !closedKeys.has(key) : openKeys.has(key); }
  function lazy(key, cls, summary, fill, byDefault) {
    var d = h('details', cls);
    d.dataset.key = key;
    var sm = h('summary');
    summary(sm);
    d.appendChild(sm);
    var filled = false;
    d.fill = function () {
      if (filled) return;
      filled = true;
      var body = h('div', 'body');
      fill(body);
      d.appendChild(body);
    };
    d.addEventListener('toggle', function () {
      if (d.open) { openKeys.add(key); closedKeys.delete(key); d.fill(); } else { openKeys.delete(key); closedKeys.add(key); }
    });
    els.set(key, d);
    if (isOpen(key, byDefault)) { d.open = true; d.fill(); }
    return d;
  }

  function usageMeta(el, u, cost, ms, label) {
    var parts = [];
    if (ms != null) parts.push((label || '') + fmtMs(ms));
    if (u) parts.push(fmtInt(u.inputTokens) + ' in / ' + fmtInt(u.outputTokens) + ' out');
    if (cost) parts.push(fmtUsd(cost));
    el.appendChild(h('span', 'meta', parts.join(' \u00B7 ')));
  }

  function renderSpan(s, run) {
    var kindName = s.kind === 'root' ? 'root' : s.kind === 'leaf' ? 'leaf' : 'sub-RLM';
    return lazy(s.id, 'span d' + Math.min(s.depth, 4), function (sm) {
      sm.appendChild(h('span', 'badge', kindName + (s.kind === 'root' ? '' : ' ' + s.id)));
      sm.appendChild(h('span', 'meta', 'depth ' + s.depth));
      sm.appendChild(h('span', 'meta ' + statusClass(s.status), s.status));
      usageMeta(sm, s.totals, s.totals.costUsd, spanDur(s, run), s.kind === 'root' ? 'run ' : '');
      if (s.totals.subCalls) sm.appendChild(h('span', 'meta', s.totals.subCalls + ' sub-calls below'));
      if (s.kind !== 'root') sm.appendChild(h('span', 'preview', oneLine(s.prompt, 140)));
    }, function (body) {
      if (s.kind !== 'root') {
        body.appendChild(h('div', 'label', 'prompt' + (s.contextChars ? ' \u00B7 context ' + fmtInt(s.contextChars) + ' chars' : '') + (s.cached ? ' \u00B7 answered from the cache' : '')));
        body.appendChild(pre(s.prompt, 'prompt'));
      }
      if (s.system != null) {
        body.appendChild(lazy(s.id + '/sys', '', function (sm) { sm.appendChild(h('span', 'meta', 'system prompt (' + fmtInt(DATA.texts[s.system].length) + ' chars)')); }, function (b) { b.appendChild(pre(DATA.texts[s.system])); }));
      }
      s.turns.forEach(function (t, ti) { body.appendChild(renderTurn(s, t, ti, run)); });
      s.errors.forEach(function (e) { body.appendChild(h('div', 'bad', 'error ' + e.code + ': ' + e.message)); });
      if (s.final) { body.appendChild(h('div', 'label', 'final (' + s.final.source + ')')); body.appendChild(pre(s.final.answer)); }
      if (s.kind !== 'root' && s.answer != null && !(s.final && s.final.answer === s.answer)) {
        body.appendChild(h('div', 'label', 'returned to the caller'));
        body.appendChild(pre(s.answer));
      }
      if (s.error) body.appendChild(h('div', 'bad', s.error.code + ': ' + s.error.message));
    });
  }

  function renderTurn(s, t, ti, run) {
    var key = s.id + '/t' + ti;
    return lazy(key, 'turn', function (sm) {
      sm.appendChild(h('b', '', turnLabel(t)));
      if (t.model) sm.appendChild(h('span', 'meta', t.model));
      usageMeta(sm, t.usage, t.costUsd, t.durationMs);
      var subs = t.blocks.reduce(function (n, b) { return n + b.subcalls.length; }, 0);
      if (t.blocks.length) sm.appendChild(h('span', 'meta', t.blocks.length + ' block' + (t.blocks.length === 1 ? '' : 's') + (subs ? ', ' + subs + ' sub-calls' : '')));
      if (t.reply == null) sm.appendChild(h('span', 'meta bad', 'no reply'));
    }, function (body) {
      if (t.request) {
        body.appendChild(lazy(key + '/req', '', function (sm) {
          sm.appendChild(h('span', 'meta', 'request: ' + t.request.messages.length + ' new message' + (t.request.messages.length === 1 ? '' : 's') + (t.request.from ? ' after ' + t.request.from + ' earlier' : '')));
        }, function (b) {
          t.request.messages.forEach(function (m) { b.appendChild(h('div', 'msg-role', m.role)); b.appendChild(pre(m.content)); });
        }));
      }
      if (t.reply != null) {
        if (t.blocks.length === 0) { body.appendChild(h('div', 'label', 'reply')); body.appendChild(pre(t.reply)); }
        else body.appendChild(lazy(key + '/reply', '', function (sm) { sm.appendChild(h('span', 'meta', 'whole reply (' + fmtInt(t.reply.length) + ' chars)')); }, function (b) { b.appendChild(pre(t.reply)); }));
      }
      t.blocks.forEach(function (b, bi) { body.appendChild(renderBlock(b, key + '/b' + bi, run)); });
    }, s.kind === 'root');
  }

  function renderBlock(b, key, run) {
    var d = h('div', 'block');
    d.dataset.key = key;
    els.set(key, d);
    var o = b.output;
    d.appendChild(h('div', 'block-head', 'block ' + b.index + (o ? ' \u00B7 ' + fmtMs(o.durationMs) + ' \u00B7 ' + (o.ok ? 'ok' : (o.error ? o.error.code : 'error')) + (o.reset ? ' \u00B7 session reset' : '') : ' \u00B7 no output')));
    d.appendChild(highlight(b.code));
    if (o) {
      var text = o.stdout || '';
      if (o.error) text += (text ? '\n' : '') + o.error.code + ': ' + o.error.message + (o.error.line ? ' (line ' + o.error.line + ')' : '');
      if (o.final != null) text += (text ? '\n' : '') + 'FINAL: ' + o.final;
      d.appendChild(pre(text, 'out' + (o.ok ? '' : ' err')));
    }
    b.subcalls.forEach(function (c) { d.appendChild(renderSpan(c, run)); });
    return d;
  }

  function reveal(key) {
    var chain = [];
    for (var k = key; k != null; k = index.get(k) && index.get(k).parent) chain.unshift(k);
    chain.forEach(function (k) { var e = els.get(k); if (e && e.tagName === 'DETAILS' && !e.open) { e.open = true; openKeys.add(k); closedKeys.delete(k); e.fill(); } });
    var el = els.get(key);
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    el.classList.remove('flash');
    void el.offsetWidth;
    el.classList.add('flash');
  }

  function renderTimeline(run, box) {
    var spans = [];
    index.forEach(function (v) { if (v.kind === 'span' && v.node.kind !== 'root') spans.push(v.node); });
    if (!spans.length) return;
    var total = Math.max(1, run.root.endMs || 1);
    spans.sort(function (a, b) { return a.startMs - b.startMs; });
    var lanes = [], peak = 0, events = [];
    spans.forEach(function (s) {
      var end = s.endMs != null ? s.endMs : total;
      events.push([s.startMs, 1], [end, -1]);
      var lane = lanes.findIndex(function (e) { return e <= s.startMs; });
      if (lane === -1) { lane = lanes.length; lanes.push(end); } else lanes[lane] = end;
      s._lane = lane; s._end = end;
    });
    events.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    var cur = 0;
    events.forEach(function (e) { cur += e[1]; if (cur > peak) peak = cur; });
    box.appendChild(h('div', 'label', 'sub-calls over the run\u2019s ' + fmtMs(total) + ' \u00B7 ' + spans.length + (spans.length === 1 ? ' sub-call' : ' sub-calls') + ' \u00B7 at most ' + peak + ' at once \u00B7 colour = depth'));
    var tl = h('div', 'timeline');
    var inner = h('div');
    inner.style.position = 'relative';
    inner.style.height = (lanes.length * 11 + 6) + 'px';
    spans.forEach(function (s) {
      var bar = h('div', 'tl-bar d' + Math.min(s.depth, 4) + (s.cached ? ' cached' : ''));
      bar.style.left = (100 * s.startMs / total) + '%';
      bar.style.width = (100 * Math.max(0, s._end - s.startMs) / total) + '%';
      bar.style.top = (3 + s._lane * 11) + 'px';
      bar.title = s.id + ' \u00B7 depth ' + s.depth + ' \u00B7 ' + fmtMs(s._end - s.startMs) + ' \u00B7 ' + s.status + '\n' + oneLine(s.prompt, 200);
      bar.dataset.key = s.id;
      bar.addEventListener('click', function () { reveal(s.id); });
      inner.appendChild(bar);
    });
    tl.appendChild(inner);
    box.appendChild(tl);
    var axis = h('div', 'axis');
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) { axis.appendChild(h('span', '', fmtMs(f * total))); });
    box.appendChild(axis);
  }

  function search(results) {
    results.textContent = '';
    if (query.length < 2) return;
    var q = query.toLowerCase(), n = 0;
    index.forEach(function (v, key) {
      if (n >= 200) return;
      for (var i = 0; i < v.texts.length; i++) {
        var t = v.texts[i];
        if (t == null) continue;
        var at = String(t).toLowerCase().indexOf(q);
        if (at === -1) continue;
        n++;
        var row = h('div', 'hit');
        row.appendChild(h('span', 'where', v.where));
        textInto(row, oneLine(String(t).slice(Math.max(0, at - 40), at + 120), 160));
        row.addEventListener('click', function () { reveal(key); });
        results.appendChild(row);
        return;
      }
    });
    if (n === 0) results.appendChild(h('div', 'hit', 'no match'));
  }

  function render() {
    var run = DATA.runs[runIndex];
    var top = document.getElementById('top');
    var app = document.getElementById('app');
    app.textContent = '';
    els = new Map();
    if (!run) { app.appendChild(h('p', '', 'This trace holds no run.')); return; }
    buildIndex(run);
    if (!top.firstChild) buildHeader(top);
    var r = run.result || {};
    var card = h('section', 'card');
    card.appendChild(h('div', 'label', 'question'));
    card.appendChild(h('div', 'qa', run.question));
    card.appendChild(h('div', 'label', 'answer'));
    card.appendChild(h('div', 'qa answer', r.answer != null ? r.answer : '(the run did not finish)'));
    var st = h('div', 'stats');
    function stat(k, v, cls) { var s = h('span', '', k + ' '); var b = h('b', cls || '', v); s.appendChild(b); st.appendChild(s); return s; }
    var tot = run.root.totals;
    stat('status', r.status || 'unfinished', statusClass(r.status || 'unfinished'));
    var tm = run.times;
    stat('total time', fmtMs(tm.totalMs)).title = 'the whole call: starting the models and reading the context, then the run';
    if (tm.setupMs >= 1) stat('before the run', fmtMs(tm.setupMs)).title = 'starting the models, reading and indexing the context';
    stat('run time', fmtMs(tm.runMs)).title = 'from the first model request to the answer: what the tree and the timeline show';
    stat('tokens', fmtInt(tot.inputTokens) + ' in / ' + fmtInt(tot.outputTokens) + ' out');
    stat('cost', fmtUsd(r.usage ? r.usage.costUsd : tot.costUsd));
    stat('model calls', fmtInt(tot.modelCalls));
    stat('sub-calls', fmtInt(tot.subCalls));
    stat('turns', String(run.root.turns.length));
    stat('max depth', String(r.maxDepthReached != null ? r.maxDepthReached : '?'));
    stat('model', run.model || '?');
    if (run.subModel && run.subModel !== run.model) stat('sub-model', run.subModel);
    if (run.context) stat('context', fmtInt(run.context.chars) + ' chars');
    if (run.time) stat('started', run.time.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
    stat('run', run.run);
    card.appendChild(st);
    if (r.error) card.appendChild(h('div', 'bad', r.error.code + ': ' + r.error.message));
    app.appendChild(card);
    var tlCard = h('section', 'card');
    renderTimeline(run, tlCard);
    if (tlCard.firstChild) app.appendChild(tlCard);
    var tree = h('section', 'card tree');
    tree.id = 'tree';
    tree.appendChild(renderSpan(run.root, run));
    app.appendChild(tree);
  }

  function buildHeader(top) {
    var bar = h('div', 'bar');
    bar.appendChild(h('h1', '', 'rlm trace'));
    if (DATA.runs.length > 1) {
      var sel = h('select');
      sel.id = 'run';
      DATA.runs.forEach(function (r, i) { var o = h('option', '', oneLine(r.question, 60) + ' \u00B7 ' + r.run.slice(0, 8)); o.value = String(i); sel.appendChild(o); });
      sel.value = String(runIndex);
      sel.addEventListener('change', function () { runIndex = Number(sel.value); openKeys = new Set(['root']); closedKeys = new Set(); render(); });
      bar.appendChild(sel);
    }
    var input = h('input');
    input.type = 'search';
    input.id = 'search';
    input.placeholder = 'Search prompts, code, outputs, replies\u2026';
    bar.appendChild(input);
    var all = h('button', '', 'expand all');
    all.addEventListener('click', function () { closedKeys = new Set(); index.forEach(function (v, k) { if (v.kind !== 'block') openKeys.add(k); }); render(); });
    bar.appendChild(all);
    var none = h('button', '', 'collapse all');
    none.addEventListener('click', function () {
      openKeys = new Set(['root']);
      closedKeys = new Set();
      index.forEach(function (v, k) { if (v.kind === 'turn') closedKeys.add(k); });
      render();
    });
    bar.appendChild(none);
    top.appendChild(bar);
    var results = h('div');
    results.id = 'results';
    top.appendChild(results);
    var timer = 0;
    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var v = input.value.trim();
        query = v.length >= 2 ? v : '';
        render();
        search(results);
      }, 150);
    });
  }

  render();
  // How long the first render took (the page's own cost of opening, for benchmarks).
  window.rlmTrace = { reveal: reveal, data: DATA, renderMs: performance.now() - T0 };
})();
`;
