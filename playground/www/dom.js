// Building the page's elements from text: every string becomes a text node, never markup.
import { celTokens } from './editor.js';

/** An element with attributes (`class`, `testid` as data-testid, others as given) and children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === '') continue;
    if (k === 'class') e.className = v;
    else if (k === 'testid') e.dataset.testid = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

export function pre(text, testid, cls = '') {
  return el('pre', { class: `out ${cls}`.trim(), testid }, String(text));
}

/** An expression, highlighted. */
export function celCode(text) {
  return el('code', { class: 'cel' }, ...celTokens(text).map(([c, t]) => (c ? el('span', { class: c }, t) : t)));
}

/** A table of rows `{testid, cells}`. */
export function table(headers, rows) {
  return el('div', { class: 'table-wrap' }, el('table', {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', { testid: r.testid }, ...r.cells.map((c) => el('td', {}, c)))))));
}

export function number(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}
