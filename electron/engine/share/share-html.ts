import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { terminalSafeDeep } from '../../../shared/terminal-text.js';
import type { ShareData } from './share-data.js';
import { countOf } from '../../../shared/count-of.js';
import { flaggedSuccess, FLAGGED_MARK, FLAGGED_TITLE } from '../../../shared/end-words.js';
import { capital } from '../../../shared/capital.js';
import { finalRewardText } from '../../../shared/format-outcome.js';

/**
 * The data as gzip, base64: a fraction of the JSON's size, so the browser's HTML parser
 * (which scans an inline script byte by byte) is done in a moment even for 10,000 steps;
 * the viewer inflates it with DecompressionStream, nothing fetched. Base64 cannot close
 * the script element.
 */
function embedData(value: unknown): string {
  return gzipSync(Buffer.from(JSON.stringify(value)), { level: 9 }).toString('base64');
}

/** Steps per chunk of inspector content: the first screen inflates the index and one chunk, not all of them. */
const CHUNK = 500;

/** The index the timeline needs (every step's line), and the steps' inspector content in chunks. */
function splitSteps(data: ShareData): { index: ShareData; chunks: string[] } {
  const index = {
    ...data,
    steps: data.steps.map((s) => ({
      step: s.step,
      kind: s.kind,
      action: s.action,
      ...(s.bad ? { bad: true as const } : {}),
      ...(s.final !== undefined ? { final: s.final.slice(0, 200) } : {}),
    })),
  };
  const chunks: string[] = [];
  for (let i = 0; i < data.steps.length; i += CHUNK) {
    const part = data.steps.slice(i, i + CHUNK);
    chunks.push(
      `<script type="application/octet-stream" class="share-chunk" data-first="${part[0].step}" data-last="${part[part.length - 1].step}">${embedData(part)}</script>`,
    );
  }
  return { index, chunks };
}

/** The header's counts (`1 step · 0 QA flags`), worded here by the one count helper, not in the viewer's script. */
function countLine(data: ShareData): string {
  return `${countOf(data.step_count, 'step')} · ${countOf(data.flags.length, 'QA flag')}${data.redacted ? ' · redacted' : ''}`;
}

/**
 * The header's status, worded here by the window's rule ({@link flaggedSuccess}): a success QA
 * flagged reads `succeeded · ⚑ flagged` in amber, not a green "succeeded" beside "1 QA flag".
 */
function statusSpan(data: ShareData): string {
  if (!data.end) return '<span id="status" class="status open">not ended</span>';
  const flagged = flaggedSuccess(data.end.status, data.flags);
  const cls = flagged ? 'flagged' : data.end.status;
  const title = `end reason: ${data.end.end_reason}${flagged ? ` — ${FLAGGED_TITLE}` : ''}`;
  return `<span id="status" class="status ${esc(cls)}" data-testid="share-status" title="${esc(title)}">${esc(`${data.end.status}${flagged ? FLAGGED_MARK : ''} — ${data.end.words}`)}</span>`;
}

/**
 * The verifier's verdict under the header, as the window's end line and `stepbox show` say it
 * (`verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt · final reward 1.00`),
 * what it printed folded under Details; nothing while the branch is open.
 */
function verdictBlock(data: ShareData): string {
  const end = data.end;
  if (!end) return '';
  const reward = end.final_reward === null ? '' : ` · ${finalRewardText(end.final_reward)}`;
  const output =
    end.verifier_output === null
      ? ''
      : `<details data-testid="share-verifier-output"><summary>Details: what the verifier printed</summary><pre>${esc(end.verifier_output)}</pre></details>`;
  return `<div class="verdict" data-testid="share-verdict">${esc(capital(end.verdict))}${esc(reward)}.${output}</div>`;
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The viewer: plain DOM code, no framework, nothing fetched. The timeline renders only
 * the rows in view (a 10,000-step episode stays one screen of nodes); the inspector
 * builds a step's tab when it is selected. `document.body.dataset.ready` and
 * `window.__shareFirstRenderMs` say when the first screen is drawn (the tests read them).
 */
const VIEWER = String.raw`
(function () {
  var holder = document.getElementById('share-data');
  if (typeof DecompressionStream === 'undefined') {
    document.body.textContent = 'This browser cannot open a stepbox share file (it lacks DecompressionStream): use a current Chrome, Edge, Firefox or Safari.';
    return;
  }
  inflate(holder)
    .then(start)
    .catch(function (e) { document.body.textContent = 'This share file is damaged: ' + e; });
})();

/** A script element's gzip+base64 text, inflated and parsed. */
function inflate(node) {
  var bin = atob(node.textContent.trim());
  var bytes = new Uint8Array(bin.length);
  for (var b = 0; b < bin.length; b++) bytes[b] = bin.charCodeAt(b);
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')))
    .text()
    .then(JSON.parse);
}

function start(data) {
  var ROW = 24;
  var $ = function (id) { return document.getElementById(id); };
  var el = function (tag, attrs, text) {
    var n = document.createElement(tag);
    if (attrs) for (var k in attrs) n.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  };
  var flagsByStep = {};
  data.flags.forEach(function (f) { (flagsByStep[f.step] = flagsByStep[f.step] || []).push(f); });
  var rows = data.steps;
  // Each step's inspector content sits in a chunk of its own, inflated the first time one of its steps is shown.
  var byStep = {};
  var chunks = Array.prototype.map.call(document.querySelectorAll('script.share-chunk'), function (n) {
    return { node: n, first: Number(n.getAttribute('data-first')), last: Number(n.getAttribute('data-last')), loading: null };
  });
  function detailOf(step) {
    if (byStep[step]) return Promise.resolve(byStep[step]);
    var c = chunks.find(function (x) { return x.first <= step && step <= x.last; });
    if (!c) return Promise.resolve(null);
    c.loading = c.loading || inflate(c.node).then(function (steps) { steps.forEach(function (s) { byStep[s.step] = s; }); });
    return c.loading.then(function () { return byStep[step] || null; });
  }
  var shown = rows;
  var selected = rows.length ? rows[0].step : 0;
  var tab = 'action';

  // Header
  $('title').textContent = data.task.name;
  $('goal').textContent = data.task.goal;
  $('ids').textContent = data.episode + (data.branch !== data.episode ? ' / ' + data.branch : '') + ' · ' + data.agent + ' · ' + new Date(data.created).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

  // Timeline (virtualized)
  var list = $('timeline');
  var inner = $('timeline-inner');
  function actionText(s) {
    if (s.kind === 'setup') return 'setup';
    return s.action || (s.final !== undefined ? 'final: ' + s.final : s.kind);
  }
  function renderRows() {
    inner.style.height = shown.length * ROW + 'px';
    var first = Math.max(0, Math.floor(list.scrollTop / ROW) - 5);
    var last = Math.min(shown.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 5);
    inner.textContent = '';
    for (var i = first; i < last; i++) {
      var s = shown[i];
      var row = el('div', { 'class': 'row' + (s.step === selected ? ' selected' : '') + (s.bad ? ' bad' : ''), 'data-testid': 'share-step', 'data-step': s.step, role: 'option' });
      row.style.top = i * ROW + 'px';
      row.appendChild(el('span', { 'class': 'num' }, s.step));
      row.appendChild(el('span', { 'class': 'act' }, actionText(s)));
      var fl = flagsByStep[s.step];
      if (fl) row.appendChild(el('span', { 'class': 'flag ' + fl[0].severity, title: fl.map(function (f) { return f.label + ' (QA rule ' + f.rule + '): ' + f.message; }).join('\n') }, fl.map(function (f) { return f.label; }).join(', ')));
      row.addEventListener('click', select.bind(null, s.step));
      inner.appendChild(row);
    }
  }
  list.addEventListener('scroll', function () { requestAnimationFrame(renderRows); });
  $('filter').addEventListener('input', function (e) {
    var q = e.target.value.toLowerCase();
    shown = q ? rows.filter(function (s) { return actionText(s).toLowerCase().indexOf(q) >= 0 || String(s.step) === q; }) : rows;
    renderRows();
  });
  document.addEventListener('keydown', function (e) {
    if (e.target && e.target.tagName === 'INPUT') return;
    var i = shown.findIndex(function (s) { return s.step === selected; });
    if (e.key === 'ArrowDown' && i < shown.length - 1) { select(shown[i + 1].step); e.preventDefault(); }
    if (e.key === 'ArrowUp' && i > 0) { select(shown[i - 1].step); e.preventDefault(); }
  });

  function select(step) {
    selected = step;
    var i = shown.findIndex(function (s) { return s.step === step; });
    if (i >= 0 && (i * ROW < list.scrollTop || (i + 1) * ROW > list.scrollTop + list.clientHeight)) list.scrollTop = Math.max(0, i * ROW - list.clientHeight / 2);
    renderRows();
    renderInspector();
  }

  // Inspector
  var TABS = [['action', 'Action'], ['output', 'Output'], ['request', 'Request'], ['memory', 'Memory'], ['files', 'Files'], ['qa', 'QA']];
  var tabBar = $('tabs');
  TABS.forEach(function (t) {
    var b = el('button', { 'data-tab': t[0], role: 'tab', 'data-testid': 'share-tab-' + t[0] }, t[1]);
    b.addEventListener('click', function () { tab = t[0]; renderInspector(); });
    tabBar.appendChild(b);
  });
  function pre(text, cls) { return el('pre', { 'class': cls || '' }, text); }
  function json(v) { return JSON.stringify(v, null, 2); }
  // A flag's evidence as a list a person reads (its keys in words, lists one item a line), not
  // the JSON the trace holds: the QA tab once printed the object whole.
  function evidenceValue(v) {
    if (v === null || v === undefined) return el('span', { 'class': 'muted' }, 'none');
    if (Array.isArray(v)) {
      if (!v.length) return el('span', { 'class': 'muted' }, 'none');
      var ul = el('ul');
      v.forEach(function (x) { var li = el('li'); li.appendChild(evidenceValue(x)); ul.appendChild(li); });
      return ul;
    }
    if (typeof v === 'object') {
      var keys = Object.keys(v);
      if (keys.every(function (k) { return v[k] === null || typeof v[k] !== 'object'; }))
        return el('span', { 'class': 'mono' }, keys.map(function (k) { return k.replace(/_/g, ' ') + ': ' + (typeof v[k] === 'string' ? v[k] : String(v[k])); }).join(' · '));
      return evidenceList(v);
    }
    if (typeof v === 'number' && !Number.isInteger(v)) return el('span', null, String(Math.round(v * 1000) / 1000));
    return el('span', { 'class': typeof v === 'string' ? 'mono' : '' }, String(v));
  }
  function evidenceList(obj) {
    var dl = el('dl', { 'class': 'evidence-list' });
    Object.keys(obj || {}).forEach(function (k) {
      dl.appendChild(el('dt', null, k.replace(/_/g, ' ')));
      var dd = el('dd');
      dd.appendChild(evidenceValue(obj[k]));
      dl.appendChild(dd);
    });
    return dl;
  }
  function section(title, body) {
    var d = el('div', { 'class': 'section' });
    d.appendChild(el('h3', null, title));
    d.appendChild(body);
    return d;
  }
  function diffLines(a, b) {
    // A line diff by longest common subsequence on up to 2,000 lines a side; longer texts show both sides whole.
    var x = a === null ? [] : a.split('\n'), y = b === null ? [] : b.split('\n');
    var box = el('div', { 'class': 'diff' });
    if (x.length > 2000 || y.length > 2000) { box.appendChild(pre(b === null ? a : b)); return box; }
    var n = x.length, m = y.length, L = [];
    for (var i = 0; i <= n; i++) { L.push(new Uint16Array(m + 1)); }
    for (i = n - 1; i >= 0; i--) for (var j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    i = 0; j = 0;
    var add = function (cls, sign, t) { box.appendChild(el('div', { 'class': 'line ' + cls }, sign + ' ' + t)); };
    while (i < n && j < m) {
      if (x[i] === y[j]) { add('same', ' ', x[i]); i++; j++; }
      else if (L[i + 1][j] >= L[i][j + 1]) { add('del', '-', x[i]); i++; }
      else { add('ins', '+', y[j]); j++; }
    }
    while (i < n) add('del', '-', x[i++]);
    while (j < m) add('ins', '+', y[j++]);
    return box;
  }
  function renderInspector() {
    Array.prototype.forEach.call(tabBar.children, function (b) { b.className = b.getAttribute('data-tab') === tab ? 'on' : ''; });
    var want = selected;
    var row = rows.find(function (r) { return r.step === want; });
    $('inspector-title').textContent = row ? 'Step ' + row.step + ' — ' + actionText(row) : 'No step';
    return detailOf(want).then(function (s) { if (want === selected) draw(s); });
  }
  // The step's texts cut to their head and tail (share-data.ts, in the window's words), and how to see them whole.
  function drawCut(s) {
    var box = $('cut-notice');
    box.textContent = '';
    if (!s || !s.cut) return;
    var d = el('details', { 'class': 'cut-notice', 'data-testid': 'share-cut-notice' });
    d.appendChild(el('summary', { 'data-testid': 'share-cut-summary' }, s.cut.summary));
    var ul = el('ul');
    s.cut.lines.forEach(function (l) {
      var li = el('li');
      li.appendChild(el('b', null, l.what));
      li.appendChild(document.createTextNode(' ' + l.text));
      ul.appendChild(li);
    });
    d.appendChild(ul);
    var p = el('p', null, 'The trace keeps it whole: on a machine that has this episode, ');
    p.appendChild(el('code', { 'data-testid': 'share-cut-command' }, s.cut.command));
    p.appendChild(document.createTextNode(' prints every step\u2019s whole output (step ' + s.step + '\u2019s under its results).'));
    d.appendChild(p);
    box.appendChild(d);
  }
  function draw(s) {
    var body = $('inspector-body');
    body.textContent = '';
    drawCut(s);
    if (!s) return;
    if (tab === 'action') {
      (s.calls || []).forEach(function (c) { body.appendChild(section(c.name, pre(json(c.arguments)))); });
      if (s.final !== undefined) body.appendChild(section('Final answer', pre(s.final)));
      if (s.parse_error) body.appendChild(section('Parse error', pre(s.parse_error, 'err')));
      if (s.raw) body.appendChild(section('Model output (raw)', pre(s.raw)));
      (s.injected || []).forEach(function (x) { body.appendChild(section('Intervention: ' + x.type, pre(x.summary))); });
      (s.errors || []).forEach(function (x) { body.appendChild(section('Error ' + x.code + (x.fatal ? ' (fatal)' : ''), pre(x.message, 'err'))); });
      (s.warnings || []).forEach(function (x) { body.appendChild(section('Warning ' + x.code, pre(x.message))); });
      if (s.reward !== undefined) body.appendChild(section('Reward', pre(String(s.reward))));
      if (s.kind === 'setup') body.appendChild(pre('Snapshot 0: the workspace after setup.'));
    } else if (tab === 'output') {
      var results = s.results || [];
      if (!results.length) body.appendChild(pre('No tool result at this step.'));
      results.forEach(function (r) {
        var head = r.name + ': ' + (r.ok ? 'exit ' + (r.exit_code === undefined ? 0 : r.exit_code) : 'error ' + r.error.code) + ' · ' + (r.size || r.bytes + ' bytes') + ' · ' + r.duration + (r.truncated ? ' · truncated by the output cap' : '');
        var box = el('div');
        if (r.error) box.appendChild(pre(r.error.code + ': ' + r.error.message, 'err'));
        if (r.stdout) { box.appendChild(el('h4', null, 'stdout')); box.appendChild(pre(r.stdout)); }
        if (r.stderr) { box.appendChild(el('h4', null, 'stderr')); box.appendChild(pre(r.stderr, 'err')); }
        body.appendChild(section(head, box));
      });
    } else if (tab === 'request') {
      if (s.request === undefined) body.appendChild(pre('No model request was recorded for this step (scripted agents record none), or it was left out to keep the file small.'));
      else {
        var msgs = (s.request && s.request.messages) || [];
        msgs.forEach(function (m) { body.appendChild(section(m.role + (m.tool_call_id ? ' (' + m.tool_call_id + ')' : ''), pre(typeof m.content === 'string' ? m.content : json(m.content === null ? m.tool_calls || null : m.content)))); });
        if (!msgs.length) body.appendChild(pre(json(s.request)));
      }
    } else if (tab === 'memory') {
      if (!(s.memory || []).length) body.appendChild(pre('No memory write at this step.'));
      (s.memory || []).forEach(function (w) { body.appendChild(section(w.key + ' ← ' + w.writer + (w.corruption ? ' (' + w.corruption + ')' : ''), pre(json(w.before) + '\n→\n' + json(w.after)))); });
    } else if (tab === 'files') {
      var files = data.files[s.step] || [];
      if (!files.length) body.appendChild(pre('No file changed at this step.'));
      files.forEach(function (f) {
        if (f.folder) { body.appendChild(section(f.change + ' folder ' + f.path + '/', pre('A folder: the files in it are listed on their own.'))); return; }
        var box = f.before === null && f.after === null ? pre(f.note || 'Its text could not be read.') : diffLines(f.before, f.after);
        body.appendChild(section(f.change + ' ' + f.path + (f.note ? ' (' + f.note + ')' : ''), box));
      });
    } else if (tab === 'qa') {
      var fl = flagsByStep[s.step] || [];
      if (!fl.length) body.appendChild(pre('No QA flag at this step.'));
      fl.forEach(function (f) {
        var box = el('div', { 'class': 'evidence', 'data-testid': 'share-evidence' });
        box.appendChild(el('p', null, f.message));
        box.appendChild(evidenceList(f.evidence));
        var head = section(f.severity + ' · ' + f.label, box);
        head.title = 'QA rule ' + f.rule;
        body.appendChild(head);
      });
    }
  }

  // Side panel: QA flags, branch tree, walkthrough
  var flagList = $('flags');
  if (!data.flags.length) flagList.appendChild(el('li', null, 'No QA flag.'));
  data.flags.forEach(function (f) {
    var li = el('li', { 'class': f.severity, 'data-testid': 'share-flag' });
    var a = el('a', { href: '#', title: 'QA rule ' + f.rule }, 'step ' + f.step + ' · ' + f.label);
    a.addEventListener('click', function (e) { e.preventDefault(); tab = 'qa'; select(f.step); });
    li.appendChild(a);
    li.appendChild(el('div', null, f.message));
    flagList.appendChild(li);
  });
  var tree = $('branches');
  function addBranch(parent, depth) {
    data.branches.filter(function (b) { return b.parent === parent; }).forEach(function (b) {
      var li = el('li', { 'data-testid': 'share-branch', 'class': b.branch === data.branch ? 'current' : '' }, (depth ? '↳ ' : '') + b.branch + (b.fork_step !== null ? ' (fork at step ' + b.fork_step + ')' : ''));
      li.style.paddingLeft = depth * 14 + 'px';
      tree.appendChild(li);
      addBranch(b.branch, depth + 1);
    });
  }
  addBranch(null, 0);
  var walk = $('walkthrough');
  if (data.walkthrough) {
    $('walkthrough-title').textContent = 'Walkthrough: ' + data.walkthrough.name;
    // Lines of one paragraph joined, as Markdown reads them.
    var lines = [];
    data.walkthrough.markdown.split('\n').forEach(function (line) {
      var prev = lines.length ? lines[lines.length - 1] : '';
      var plain = function (t) { return t.trim() && !/^(#{1,3})\s/.test(t) && !/^\s*[-*]\s+/.test(t) && !/^\x60\x60\x60/.test(t); };
      if (plain(line) && prev.trim() && !/^(#{1,3})\s/.test(prev) && !/^\x60\x60\x60/.test(prev)) lines[lines.length - 1] = prev + ' ' + line.trim();
      else lines.push(line);
    });
    lines.forEach(function (line) {
      var m = /^(#{1,3})\s+(.*)$/.exec(line);
      var n;
      if (m) n = el('h' + (m[1].length + 2), null, m[2]);
      else if (/^\s*[-*]\s+/.test(line)) n = el('li', null, line.replace(/^\s*[-*]\s+/, ''));
      else if (line.trim()) n = el('p', null, line);
      if (n) { n.innerHTML = n.innerHTML.replace(/\*\*(.+?)\*\*/g, '<b>$1</b>').replace(/\x60([^\x60]+)\x60/g, '<code>$1</code>'); walk.appendChild(n); }
    });
  } else $('walkthrough-box').style.display = 'none';
  if (data.omitted.length) $('omitted').textContent = 'Left out to keep this file small: ' + data.omitted.join('; ') + '.';

  renderRows();
  renderInspector().then(function () {
    requestAnimationFrame(function () {
      window.__shareFirstRenderMs = performance.now();
      document.body.dataset.ready = 'true';
    });
  });
}
`;

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:13px/1.4 system-ui,sans-serif;color:#1d2330;background:#f5f6f8;height:100vh;display:flex;flex-direction:column}
header{padding:8px 14px;background:#1d2330;color:#fff}header h1{font-size:16px;margin:0 8px 0 0;display:inline}header .goal{color:#cfd6e4;margin-top:2px}
header .meta{color:#9aa4b8;font-size:12px}header .verdict{color:#cfd6e4;font-size:12px;margin-top:2px}header .verdict summary{cursor:pointer;color:#9aa4b8}header .verdict pre{max-height:200px;margin-top:4px;color:#1d2330}.status{padding:1px 6px;border-radius:3px;font-size:12px;background:#555}.status.succeeded{background:#2e7d32}.status.failed,.status.error{background:#c62828}.status.timeout{background:#ef6c00}.status.flagged{background:#8a5a00}
main{flex:1;display:grid;grid-template-columns:minmax(280px,34%) 1fr 300px;min-height:0}
.pane{display:flex;flex-direction:column;min-height:0;border-right:1px solid #d8dce3;background:#fff}
.pane h2{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#5b6475;margin:0;padding:6px 10px;border-bottom:1px solid #e3e6eb}
#filter{margin:6px 10px;padding:4px 6px;border:1px solid #ccd;border-radius:3px}
#timeline{flex:1;overflow:auto;position:relative}#timeline-inner{position:relative}
.row{position:absolute;left:0;right:0;height:24px;display:flex;gap:8px;align-items:center;padding:0 10px;cursor:pointer;white-space:nowrap;border-bottom:1px solid #f0f1f4}
.row:hover{background:#eef3ff}.row.selected{background:#dbe6ff}.row.bad .act{color:#b71c1c}
.num{width:48px;color:#7a8394;text-align:right;font-variant-numeric:tabular-nums}.act{flex:1;overflow:hidden;text-overflow:ellipsis;font-family:ui-monospace,monospace;font-size:12px}
.flag{font-size:11px;padding:0 5px;border-radius:3px;background:#fff3cd;color:#7a5200}.flag.error{background:#fde0e0;color:#a00}
#tabs{display:flex;gap:2px;padding:4px 8px 0;border-bottom:1px solid #e3e6eb}#tabs button{border:0;background:none;padding:5px 10px;cursor:pointer;color:#5b6475;border-bottom:2px solid transparent}#tabs button.on{color:#1d2330;border-bottom-color:#3b6ee8;font-weight:600}
#inspector-title{padding:8px 12px 0;font-weight:600;font-family:ui-monospace,monospace;font-size:12px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#inspector-body{flex:1;overflow:auto;padding:8px 12px}.section h3{font-size:12px;margin:10px 0 4px;color:#394150}
pre{margin:0;padding:6px 8px;background:#f6f8fa;border:1px solid #e3e6eb;border-radius:3px;white-space:pre-wrap;word-break:break-word;font:12px/1.45 ui-monospace,monospace;max-height:480px;overflow:auto}pre.err{color:#a00}
.diff{font:12px/1.45 ui-monospace,monospace;border:1px solid #e3e6eb;max-height:480px;overflow:auto}.line{white-space:pre-wrap;padding:0 6px}.line.ins{background:#e6ffec}.line.del{background:#ffebe9}
aside{overflow:auto;background:#fff}aside ul{list-style:none;margin:0;padding:6px 10px}aside li{margin:0 0 8px}aside li.error a{color:#a00}aside li.warning a{color:#7a5200}aside li.current{font-weight:600}
#walkthrough{padding:0 10px 10px}#walkthrough h3,#walkthrough h4,#walkthrough h5{margin:10px 0 4px}#walkthrough p,#walkthrough li{margin:4px 0}code{background:#f0f2f5;padding:0 3px;border-radius:2px}
#omitted{padding:4px 14px;color:#7a5200;font-size:12px}
.cut-notice{margin:6px 12px 0;padding:4px 8px;background:#fff8e1;border:1px solid #f0d58a;border-radius:3px;font-size:12px;color:#5a4300}.cut-notice summary{cursor:pointer}.cut-notice ul{margin:4px 0;padding-left:16px}.cut-notice p{margin:4px 0}.cut-notice code{user-select:all;overflow-wrap:anywhere}
.evidence p{margin:0 0 6px}.evidence-list{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:0}.evidence-list dt{color:#5b6475}.evidence-list dd{margin:0;word-break:break-word}.evidence-list ul{margin:0;padding-left:16px}.mono{font:12px/1.45 ui-monospace,monospace}.muted{color:#7a8394}
`;

/**
 * The one script the file may run, by its hash: no 'unsafe-inline', so markup that slipped
 * into the page (an injected <script> or an on* attribute) would not run.
 */
const VIEWER_HASH = `sha256-${createHash('sha256').update(VIEWER, 'utf8').digest('base64')}`;

/**
 * One self-contained HTML file: the data as JSON in a script element, the viewer and its
 * style inline, and a Content-Security-Policy that forbids every fetch (no network, no
 * server; it opens from `file://` offline) and runs only the viewer (its hash).
 */
export function shareHtml(recorded: ShareData): string {
  // Tool output, file names and model text are untrusted: an ESC sequence, an OSC-8 link or
  // a bidi override (U+202E) would show raw or reorder what is read. Stripped as for a terminal.
  const data = terminalSafeDeep(recorded);
  const { index, chunks } = splitSteps(data);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src '${VIEWER_HASH}'; img-src data:">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="generator" content="stepbox share (${data.format})">
<title>${esc(data.task.name)} — ${esc(data.episode)} · stepbox</title>
<style>${STYLE}</style></head>
<body>
<header><h1 id="title"></h1>${statusSpan(data)}<div class="goal" id="goal"></div><div class="meta"><span id="ids"></span> · <span id="count" data-testid="share-count">${esc(countLine(data))}</span></div>${verdictBlock(data)}</header>
<div id="omitted"></div>
<main>
<section class="pane" aria-label="timeline"><h2>Timeline</h2><input id="filter" placeholder="filter steps by text" aria-label="filter steps by text"><div id="timeline" role="listbox" data-testid="share-timeline"><div id="timeline-inner"></div></div></section>
<section class="pane" aria-label="inspector" data-testid="share-inspector"><div id="tabs" role="tablist"></div><div id="inspector-title" data-testid="share-inspector-title"></div><div id="cut-notice"></div><div id="inspector-body"></div></section>
<aside aria-label="QA flags, branches and walkthrough"><div class="pane-side"><h2 style="font-size:12px;text-transform:uppercase;color:#5b6475;margin:0;padding:6px 10px;border-bottom:1px solid #e3e6eb">QA flags</h2><ul id="flags" data-testid="share-flags"></ul>
<h2 style="font-size:12px;text-transform:uppercase;color:#5b6475;margin:0;padding:6px 10px;border-bottom:1px solid #e3e6eb">Branches</h2><ul id="branches" data-testid="share-branches"></ul>
<div id="walkthrough-box"><h2 id="walkthrough-title" style="font-size:12px;text-transform:uppercase;color:#5b6475;margin:0;padding:6px 10px;border-bottom:1px solid #e3e6eb">Walkthrough</h2><div id="walkthrough" data-testid="share-walkthrough"></div></div></div></aside>
</main>
<script type="application/octet-stream" id="share-data" data-encoding="gzip+base64">${embedData(index)}</script>
${chunks.join('\n')}
<script>${VIEWER}</script>
</body></html>
`;
}
