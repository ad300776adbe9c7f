// Editors with highlighting: a textarea over a highlighted copy of its text. CEL is
// highlighted on its own and inside YAML, where the value of a key that holds an expression
// (`rule`, `messageExpression`, `expression`, `valueExpression`) is CEL, block scalars
// included. Everything is built with text nodes: what is typed or pasted is never markup.

/** Keys whose values are CEL in Kubernetes' YAML. */
const CEL_KEYS = new Set(['rule', 'messageExpression', 'expression', 'valueExpression']);
const KEYWORDS = new Set(['true', 'false', 'null', 'in']);
const MACROS = new Set(['has', 'all', 'exists', 'exists_one', 'map', 'filter', 'transformList', 'transformMap', 'transformMapEntry', 'optMap', 'optFlatMap']);
/** Past this size text is shown without highlighting, to keep typing fast. */
const HIGHLIGHT_LIMIT = 200000;

const CEL_TOKEN = new RegExp([
  '(\\s+)',
  '(//[^\\n]*)',
  '((?:[rRbB]{1,2})?(?:"""[\\s\\S]*?(?:"""|$)|\'\'\'[\\s\\S]*?(?:\'\'\'|$)|"(?:[^"\\\\\\n]|\\\\.)*"?|\'(?:[^\'\\\\\\n]|\\\\.)*\'?))',
  '(0[xX][0-9a-fA-F]+[uU]?|(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?[uU]?)',
  '([A-Za-z_][A-Za-z0-9_]*)',
  '([^\\s])',
].join('|'), 'y');

/** Appends the CEL tokens of `text` to `out` (an array of [class, text]). */
export function celTokens(text, out = []) {
  CEL_TOKEN.lastIndex = 0;
  let m;
  while (CEL_TOKEN.lastIndex < text.length && (m = CEL_TOKEN.exec(text))) {
    const [all, space, comment, string, number, ident] = m;
    if (space) out.push(['', all]);
    else if (comment) out.push(['c-comment', all]);
    else if (string) out.push(['c-string', all]);
    else if (number) out.push(['c-number', all]);
    else if (ident) {
      const after = text.slice(CEL_TOKEN.lastIndex).match(/^\s*\(/);
      if (KEYWORDS.has(ident)) out.push(['c-keyword', all]);
      else if (after && MACROS.has(ident)) out.push(['c-macro', all]);
      else if (after) out.push(['c-function', all]);
      else out.push(['c-ident', all]);
    } else out.push(['c-op', all]);
  }
  return out;
}

/** The tokens of a YAML text, with CEL highlighted in the values of CEL keys. */
export function yamlTokens(text) {
  const out = [];
  const lines = text.split('\n');
  let blockIndent = -1; // inside a CEL block scalar: the column of its key
  lines.forEach((line, i) => {
    const nl = i < lines.length - 1 ? '\n' : '';
    const indent = line.length - line.trimStart().length;
    if (blockIndent >= 0) {
      if (line.trim() === '' || indent > blockIndent) {
        celTokens(line + nl, out);
        return;
      }
      blockIndent = -1;
    }
    const comment = line.match(/^(\s*)(#.*)$/);
    if (comment) {
      out.push(['', comment[1]], ['y-comment', comment[2] + nl]);
      return;
    }
    const m = line.match(/^(\s*(?:-\s+)*)([^\s#'"][^:#]*?|"[^"]*"|'[^']*')(:)(\s+|$)(.*)$/);
    if (!m) {
      const item = line.match(/^(\s*-\s+)(.*)$/);
      if (item) {
        out.push(['y-punct', item[1]]);
        yamlValue(item[2], out);
      } else yamlValue(line, out);
      out.push(['', nl]);
      return;
    }
    const [, lead, key, colon, space, value] = m;
    out.push(['y-punct', lead], ['y-key', key], ['y-punct', colon], ['', space]);
    if (CEL_KEYS.has(key.replace(/^["']|["']$/g, ''))) {
      if (/^[|>][-+0-9]*\s*(#.*)?$/.test(value)) {
        out.push(['y-punct', value]);
        // Its lines are those indented past the key's own column.
        blockIndent = lead.length;
      } else celValue(value, out);
    } else yamlValue(value, out);
    out.push(['', nl]);
  });
  return out;
}

/** A CEL expression written as a YAML scalar (plain, or quoted: the quotes are YAML's). */
function celValue(value, out) {
  const q = value[0];
  if ((q === "'" || q === '"') && value.length > 1 && value.trimEnd().endsWith(q)) {
    const end = value.trimEnd().length - 1;
    out.push(['y-punct', q]);
    celTokens(value.slice(1, end), out);
    out.push(['y-punct', value.slice(end)]);
  } else celTokens(value, out);
}

function yamlValue(value, out) {
  const c = value.match(/^(.*?)(\s+#.*)?$/);
  const v = c ? c[1] : value;
  let cls = 'y-string';
  if (/^(true|false|null|~)$/.test(v.trim())) cls = 'y-keyword';
  else if (/^-?\d+(\.\d+)?$/.test(v.trim())) cls = 'y-number';
  else if (/^[\[\]{}|>]/.test(v.trim())) cls = 'y-punct';
  out.push([cls, v]);
  if (c && c[2]) out.push(['y-comment', c[2]]);
}

/** An editor over `textarea`, highlighting `language` ('cel', 'yaml' or 'plain'). */
export class Editor {
  constructor(textarea, language) {
    this.textarea = textarea;
    this.language = language;
    this.marker = null;
    const wrap = document.createElement('div');
    wrap.className = 'editor';
    this.pre = document.createElement('pre');
    this.pre.className = 'highlight';
    this.pre.setAttribute('aria-hidden', 'true');
    textarea.replaceWith(wrap);
    wrap.append(this.pre, textarea);
    textarea.spellcheck = false;
    textarea.addEventListener('input', () => this.render());
    textarea.addEventListener('scroll', () => {
      this.pre.scrollTop = textarea.scrollTop;
      this.pre.scrollLeft = textarea.scrollLeft;
    });
    this.render();
  }

  get value() { return this.textarea.value; }

  set value(v) {
    this.textarea.value = v;
    this.render();
  }

  /** Marks a position (1-based line, 0-based column in code points), or clears the mark. */
  mark(line, column) {
    this.marker = line ? { line, column } : null;
    this.render();
  }

  render() {
    const text = this.textarea.value;
    let tokens;
    if (text.length > HIGHLIGHT_LIMIT || this.language === 'plain') tokens = [['', text]];
    else if (this.language === 'cel') tokens = celTokens(text);
    else tokens = yamlTokens(text);
    const at = this.marker ? offsetOf(text, this.marker.line, this.marker.column) : -1;
    const frag = document.createDocumentFragment();
    let pos = 0;
    for (const [cls, t] of tokens) {
      if (at >= pos && at < pos + t.length) {
        appendSpan(frag, cls, t.slice(0, at - pos));
        const ch = t.slice(at - pos, at - pos + 1);
        appendSpan(frag, `${cls} error-mark`, ch === '\n' ? ' \n' : ch);
        appendSpan(frag, cls, t.slice(at - pos + 1));
      } else appendSpan(frag, cls, t);
      pos += t.length;
    }
    if (at >= text.length) appendSpan(frag, 'error-mark', ' ');
    // A final newline needs a character after it to take up its line.
    frag.append(document.createTextNode('\n'));
    this.pre.replaceChildren(frag);
  }
}

function appendSpan(parent, cls, text) {
  if (!text) return;
  if (!cls) {
    parent.append(document.createTextNode(text));
    return;
  }
  const s = document.createElement('span');
  s.className = cls;
  s.textContent = text;
  parent.append(s);
}

/** The index in a JS string of a 1-based line and a 0-based column counted in code points. */
export function offsetOf(text, line, column) {
  let i = 0;
  for (let l = 1; l < line; l++) {
    const n = text.indexOf('\n', i);
    if (n < 0) return text.length;
    i = n + 1;
  }
  for (let c = 0; c < column && i < text.length && text[i] !== '\n'; c++) {
    i += text.codePointAt(i) > 0xffff ? 2 : 1;
  }
  return i;
}
