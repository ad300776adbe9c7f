// The playground's modes: what each asks for and how its result is shown. A mode here pairs
// with a Mode of the WebAssembly module (playground/src/lib.rs); adding an environment is
// adding an entry to both. Results are built from text nodes only.
import { el, pre, celCode, table, number } from './dom.js';

const versionOption = (key = 'version') => ({ key, label: 'Kubernetes', kind: 'version' });

export const MODES = {
  expression: {
    fields: [
      { key: 'expression', label: 'Expression', language: 'cel', rows: 4 },
      { key: 'variables', label: 'Variables (YAML or JSON)', language: 'yaml', rows: 9 },
      { key: 'declarations', label: 'Declarations (name: type, one per line; others are dyn)', language: 'plain', rows: 2 },
    ],
    options: [
      { key: 'environment', label: 'Environment', kind: 'select', choices: [['kubernetes', 'Kubernetes'], ['default', 'cel-go, every extension']] },
      versionOption(),
      { key: 'stored', label: 'stored expressions', kind: 'checkbox' },
      { key: 'cost_limit', label: 'Cost limit', kind: 'number', placeholder: 'the environment\u2019s' },
    ],
    render(r) {
      if (r.ok) {
        return [
          el('div', { class: 'verdict ok', testid: 'verdict' }, 'value'),
          pre(r.value, 'value'),
          facts([['type', r.type, 'type'], ['cost', number(r.cost), 'cost'], estimateFact(r), limitFact(r)]),
        ];
      }
      return [
        el('div', { class: 'verdict bad', testid: 'verdict' }, r.phase === 'eval' ? 'evaluation error' : r.phase === 'compile' ? 'compile error' : 'bad input'),
        pre(r.error, 'error', r.phase === 'compile' ? 'diagnostic caret' : 'diagnostic'),
        r.phase === 'eval' ? facts([['cost', number(r.cost), 'cost'], estimateFact(r), limitFact(r)]) : null,
      ];
    },
    mark(r) {
      const d = r.diagnostics && r.diagnostics.find((x) => x.line);
      return d ? { field: 'expression', line: d.line, column: d.column } : null;
    },
  },

  crd: {
    fields: [
      { key: 'crd', label: 'CustomResourceDefinition', language: 'yaml', rows: 16 },
      { key: 'object', label: 'Object', language: 'yaml', rows: 10 },
      { key: 'old_object', label: 'Old object (for an update; optional)', language: 'yaml', rows: 4 },
    ],
    options: [versionOption()],
    render(r) {
      if (!r.ok) {
        return [el('div', { class: 'verdict bad', testid: 'verdict' }, r.phase === 'crd' ? 'the CRD is invalid' : 'bad input'), pre(r.error, 'error', 'diagnostic')];
      }
      const out = [];
      const v = r.validation;
      if (v) {
        let word = 'valid';
        if (v.valid === null) word = 'not validated';
        else if (v.status && v.status.code === 400) word = 'rejected';
        else if (!v.valid) word = 'invalid';
        const code = v.status ? ` (${v.status.code}${v.status.reason ? ` ${v.status.reason}` : ''})` : '';
        out.push(el('div', { class: `verdict ${v.valid ? 'ok' : 'bad'}`, testid: 'verdict' }, `${v.kind || 'object'} ${JSON.stringify(v.name || '')} is ${word}${code}`));
        const text = v.error || v.message;
        if (text) out.push(pre(text, 'message', 'diagnostic'));
        if (v.warnings && v.warnings.length) out.push(list('Warnings', v.warnings, 'warnings'));
        if (v.runtime_cost !== undefined) {
          out.push(facts([['run-time cost', `${number(v.runtime_cost)} of the budget of ${number(r.budget)}`, 'runtime-cost']]));
        }
      } else out.push(el('div', { class: 'verdict', testid: 'verdict' }, 'no object: the CRD compiles'));
      out.push(el('h3', {}, `Rules of ${r.crd.kind} ${r.crd.version || ''}`));
      out.push(table(['field', 'rule', 'message', 'cost estimate', 'verdict'], r.rules.map((x) => ({
        testid: 'rule',
        cells: [
          el('code', {}, x.path),
          celCode(x.rule),
          x.message_expression ? celCode(x.message_expression) : x.message,
          el('span', { class: x.estimated_cost > r.rule_cost_limit ? 'over' : '' }, number(x.estimated_cost)),
          el('span', { class: `v-${(x.verdict || 'none').replace(' ', '-')}`, testid: 'rule-verdict' }, x.error ? `error: ${x.error}` : x.verdict + (x.transition ? ' (transition rule)' : '')),
        ],
      }))));
      out.push(facts([
        ['per-rule limit', number(r.rule_cost_limit)],
        ['estimated cost of all rules', `${number(r.total_cost)} of the CRD limit of ${number(r.crd_cost_limit)}`, 'total-cost'],
      ]));
      return out;
    },
  },

  admission: {
    fields: [
      { key: 'policies', label: 'Policies and bindings', language: 'yaml', rows: 16 },
      { key: 'object', label: 'Object', language: 'yaml', rows: 10 },
      { key: 'old_object', label: 'Old object (UPDATE, DELETE; optional)', language: 'yaml', rows: 3 },
      { key: 'params', label: 'Params (optional)', language: 'yaml', rows: 4 },
      { key: 'namespaces', label: 'Namespaces (optional)', language: 'yaml', rows: 4 },
      { key: 'authz', label: 'Authorizer rules (optional)', language: 'yaml', rows: 3 },
    ],
    options: [
      { key: 'operation', label: 'Operation', kind: 'select', choices: [['CREATE', 'CREATE'], ['UPDATE', 'UPDATE'], ['DELETE', 'DELETE'], ['CONNECT', 'CONNECT']] },
      { key: 'user', label: 'User', kind: 'text', placeholder: 'alice' },
      { key: 'groups', label: 'Groups', kind: 'text', placeholder: 'devs, admins' },
      versionOption(),
    ],
    render(r) {
      if (!r.ok) return [el('div', { class: 'verdict bad', testid: 'verdict' }, r.phase === 'policies' ? 'the policies are invalid' : 'bad input'), pre(r.error, 'error', 'diagnostic')];
      const out = [
        el('div', { class: `verdict ${r.allowed ? 'ok' : 'bad'}`, testid: 'verdict' }, r.allowed ? 'allowed' : `denied (${r.status.code} ${r.status.reason})`),
      ];
      if (r.status.message) out.push(pre(r.status.message, 'message', 'diagnostic'));
      if (r.warnings.length) out.push(list('Warnings', r.warnings, 'warnings'));
      const notes = Object.entries(r.audit_annotations || {});
      if (notes.length) {
        out.push(el('h3', {}, 'Audit annotations'));
        out.push(table(['key', 'value'], notes.map(([k, v]) => ({ testid: 'annotation', cells: [el('code', {}, k), v] }))));
      }
      if (r.object) {
        out.push(el('h3', {}, 'Object after the mutating policies'));
        out.push(pre(JSON.stringify(r.object, null, 2), 'object'));
      }
      return out;
    },
  },
};

function facts(rows) {
  return el('dl', { class: 'facts' }, ...rows.filter(Boolean).flatMap(([k, v, id]) => [el('dt', {}, k), el('dd', { testid: id }, v)]));
}

function estimateFact(r) {
  return r.estimate ? ['static estimate', `[${number(r.estimate.min)}, ${number(r.estimate.max)}]`, 'estimate'] : null;
}

function limitFact(r) {
  return r.cost_limit !== null && r.cost_limit !== undefined ? ['cost limit', number(r.cost_limit), 'cost-limit'] : null;
}

function list(title, items, id) {
  return el('div', { testid: id }, el('h3', {}, title), el('ul', {}, ...items.map((w) => el('li', {}, w))));
}
