// The playground page: mode tabs, forms, editors, share links, examples, and the worker
// that evaluates. Nothing here evaluates CEL: the WebAssembly module in worker.js does.
import { MODES } from './modes.js';
import { Editor } from './editor.js';
import { el } from './dom.js';

/** A request running longer than this is stopped: `cel admit`'s default --time-limit. */
const TIME_LIMIT_MS = 30000;
// Milliseconds since the navigation began (what the browser tests read).
const timings = { script: performance.now() };
window.celerityTimings = timings;

// ---- The evaluator: a worker, replaced when it runs past the time limit or traps. ----

class Evaluator {
  constructor() {
    this.next = 1;
    this.pending = new Map();
    this.start();
  }

  start() {
    this.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.ready = new Promise((resolve, reject) => {
      this.worker.onmessage = (e) => {
        const m = e.data;
        if (m.ready) {
          timings.moduleReady = timings.moduleReady || performance.now();
          resolve(JSON.parse(m.ready));
        } else if (m.failed) reject(new Error(m.failed));
        else this.settle(m);
      };
      this.worker.onerror = (e) => reject(new Error(e.message || 'the evaluator could not start'));
    });
  }

  settle(m) {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.crashed) {
      this.restart();
      p.resolve({ ok: false, phase: 'limit', error: `the evaluator stopped: ${m.crashed} (out of memory or stack); it was restarted` });
    } else p.resolve(JSON.parse(m.result));
  }

  restart() {
    this.worker.terminate();
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve({ ok: false, phase: 'limit', error: 'stopped: the evaluator was restarted' });
      this.pending.delete(id);
    }
    this.start();
  }

  run(request) {
    const id = this.next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.restart();
        resolve({ ok: false, phase: 'limit', error: `stopped after ${TIME_LIMIT_MS / 1000} s (the time limit of \`cel admit\`)` });
      }, TIME_LIMIT_MS);
      this.pending.set(id, { resolve, timer });
      this.worker.postMessage({ id, request: JSON.stringify(request) });
    });
  }
}

// ---- Share links: the state in the URL's fragment, deflated where the browser can. ----

async function encodeState(state) {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  if (typeof CompressionStream === 'function') {
    const z = await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer();
    return `z=${base64url(new Uint8Array(z))}`;
  }
  return `j=${base64url(bytes)}`;
}

async function decodeState(hash) {
  const m = hash.match(/^#?([zj])=([A-Za-z0-9_-]*)$/);
  if (!m) return null;
  let bytes = unbase64url(m[2]);
  if (m[1] === 'z') {
    bytes = new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer());
  }
  const state = JSON.parse(new TextDecoder().decode(bytes));
  if (!state || typeof state !== 'object' || !MODES[state.mode]) return null;
  return state;
}

function base64url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unbase64url(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

// ---- The page. ----

const evaluator = new Evaluator();
const ui = {
  tabs: document.getElementById('modes'),
  form: document.getElementById('inputs'),
  result: document.getElementById('result'),
  raw: document.getElementById('raw'),
  status: document.getElementById('status'),
  examples: document.getElementById('examples'),
  share: document.getElementById('share'),
};
let info = null;
let catalogue = [];
let mode = 'expression';
const editors = {};
const options = {};
let generation = 0;
let debounce = null;

function values() {
  const v = { mode };
  for (const [k, e] of Object.entries(editors)) v[k] = e.value;
  for (const [k, o] of Object.entries(options)) {
    if (o.type === 'checkbox') v[k] = o.checked;
    else if (o.value !== '') v[k] = o.type === 'number' ? Number(o.value) : o.value;
  }
  return v;
}

function buildForm(state = {}) {
  const m = MODES[mode];
  for (const k of Object.keys(editors)) delete editors[k];
  for (const k of Object.keys(options)) delete options[k];
  const bar = el('div', { class: 'options' });
  for (const o of m.options) {
    let input;
    if (o.kind === 'select' || o.kind === 'version') {
      let choices = o.kind === 'version' ? info.versions.slice().reverse().map((v) => [v, v]) : o.choices;
      if (o.more) choices = choices.concat(info[o.more].map((p) => [p.name, p.title]));
      input = el('select', { name: o.key }, ...choices.map(([v, t]) => el('option', { value: v }, t)));
      input.value = state[o.key] || (o.kind === 'version' ? info.default : choices[0][0]);
    } else if (o.kind === 'checkbox') {
      input = el('input', { type: 'checkbox', name: o.key });
      input.checked = state[o.key] === true;
    } else {
      input = el('input', { type: o.kind === 'number' ? 'number' : 'text', name: o.key, placeholder: o.placeholder, min: o.kind === 'number' ? '0' : null });
      if (state[o.key] !== undefined) input.value = String(state[o.key]);
    }
    input.addEventListener('change', schedule);
    input.addEventListener('input', schedule);
    options[o.key] = input;
    bar.append(el('label', { class: o.kind === 'checkbox' ? 'check' : '' }, o.kind === 'checkbox' ? input : `${o.label} `, o.kind === 'checkbox' ? ` ${o.label}` : input));
  }
  const fields = m.fields.map((f) => {
    const ta = el('textarea', { name: f.key, rows: String(f.rows), 'aria-label': f.label, autocomplete: 'off', autocapitalize: 'off', wrap: 'off' });
    ta.value = typeof state[f.key] === 'string' ? state[f.key] : '';
    const box = el('div', { class: 'field' }, el('label', { class: 'field-label' }, f.label), ta);
    ta.addEventListener('input', schedule);
    ta.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        evaluate();
      }
    });
    return [f, ta, box];
  });
  ui.form.replaceChildren(bar, ...fields.map(([, , box]) => box));
  for (const [f, ta] of fields) editors[f.key] = new Editor(ta, f.language);
  for (const b of ui.tabs.querySelectorAll('button')) b.setAttribute('aria-selected', String(b.dataset.mode === mode));
  fillExamples();
}

function schedule() {
  clearTimeout(debounce);
  debounce = setTimeout(evaluate, 350);
}

async function evaluate() {
  clearTimeout(debounce);
  const request = values();
  const mine = ++generation;
  ui.status.textContent = 'evaluating\u2026';
  document.body.dataset.state = 'busy';
  const prepare = MODES[mode].prepare;
  const result = await evaluator.run(prepare ? prepare(request) : request);
  if (mine !== generation) return;
  show(result);
  if (timings.firstResult === undefined) timings.firstResult = performance.now();
  document.body.dataset.state = 'done';
  document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  ui.status.textContent = '';
  const hash = await encodeState(request);
  // Browsers refuse very long addresses: a huge paste is not put in the link.
  if (hash.length < 1000000) history.replaceState(null, '', `#${hash}`);
}

function show(result) {
  const m = MODES[mode];
  let parts;
  if (result.phase === 'limit' || result.phase === 'input') {
    parts = [el('div', { class: 'verdict bad', testid: 'verdict' }, result.phase === 'limit' ? 'stopped' : 'bad input'), el('pre', { class: 'out diagnostic', testid: 'error' }, result.error)];
  } else parts = m.render(result);
  ui.result.replaceChildren(...parts.filter(Boolean));
  ui.raw.textContent = JSON.stringify(result, null, 2);
  for (const e of Object.values(editors)) e.mark(null);
  const mark = m.mark && m.mark(result);
  if (mark && editors[mark.field]) editors[mark.field].mark(mark.line, mark.column);
}

// ---- Examples, from examples/playground.json and the files it names. ----

function fillExamples() {
  const mine = catalogue.filter((x) => x.mode === mode);
  ui.examples.replaceChildren(el('option', { value: '' }, 'Examples\u2026'), ...mine.map((x, i) => el('option', { value: String(i) }, x.title)));
}

async function loadExample(x) {
  const state = { mode: x.mode, ...(x.options || {}) };
  for (const [k, v] of Object.entries(x.fields || {})) state[k] = v;
  for (const [k, ref] of Object.entries(x.files || {})) state[k] = await exampleFile(ref);
  mode = x.mode;
  buildForm(state);
  await evaluate();
}

/** The text of `path` under examples/, or of its document `#n` (from 0). */
async function exampleFile(ref) {
  const [path, doc] = ref.split('#');
  const response = await fetch(`examples/${path}`);
  if (!response.ok) throw new Error(`examples/${path}: ${response.status}`);
  const text = await response.text();
  if (doc === undefined) return text;
  const docs = text.split(/^---[ \t]*(?:#.*)?$\n?/m).filter((d) => d.replace(/^\s*#.*$/gm, '').trim() !== '');
  return (docs[Number(doc)] || '').replace(/^\s*#.*\n/, '');
}

ui.examples.addEventListener('change', async () => {
  const x = catalogue.filter((e) => e.mode === mode)[Number(ui.examples.value)];
  ui.examples.value = '';
  if (x) await loadExample(x);
});

ui.share.addEventListener('click', async () => {
  const url = `${location.origin}${location.pathname}#${await encodeState(values())}`;
  history.replaceState(null, '', url);
  try {
    await navigator.clipboard.writeText(url);
    ui.status.textContent = 'link copied';
  } catch {
    ui.status.textContent = 'the link is in the address bar';
  }
});

async function main() {
  try {
    info = await evaluator.ready;
  } catch (e) {
    ui.result.replaceChildren(el('div', { class: 'verdict bad', testid: 'verdict' }, 'the WebAssembly module did not load'), el('pre', { class: 'out diagnostic' }, String(e.message || e)));
    return;
  }
  ui.tabs.replaceChildren(...info.modes.map((m) => {
    const b = el('button', { type: 'button', role: 'tab', 'data-mode': m.name }, m.title);
    b.addEventListener('click', async () => {
      if (mode === m.name) return;
      mode = m.name;
      const first = catalogue.find((x) => x.mode === mode);
      if (first) await loadExample(first);
      else {
        buildForm({});
        await evaluate();
      }
    });
    return b;
  }));
  const catalogueLoaded = fetch('examples/playground.json').then((r) => (r.ok ? r.json() : [])).catch(() => []);
  let state = null;
  try {
    state = await decodeState(location.hash);
  } catch {
    ui.status.textContent = 'the link could not be read';
  }
  if (state) {
    mode = state.mode;
    buildForm(state);
    await evaluate();
    catalogue = await catalogueLoaded;
    fillExamples();
    return;
  }
  catalogue = await catalogueLoaded;
  const first = catalogue.find((x) => x.mode === mode);
  if (first) await loadExample(first);
  else {
    buildForm({});
    await evaluate();
  }
}

main();
