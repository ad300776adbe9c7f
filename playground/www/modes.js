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
      // Kubernetes' CRD and policy environment, cel-go's, and the other places the API
      // server evaluates CEL (info.places: device selectors, authentication, ...).
      { key: 'environment', label: 'Environment', kind: 'select', choices: [['kubernetes', 'Kubernetes'], ['default', 'cel-go, every extension']], more: 'places' },
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

  dra: {
    fields: [
      { key: 'claims', label: 'ResourceClaims (or ResourceClaimTemplates)', language: 'yaml', rows: 14 },
      { key: 'classes', label: 'DeviceClasses (optional: without them their selectors are not applied)', language: 'yaml', rows: 8 },
      { key: 'slices', label: 'ResourceSlices (the devices)', language: 'yaml', rows: 12 },
    ],
    options: [versionOption()],
    // The lines of `cel dra`'s report, one element per line.
    render(r) {
      if (!r.ok) return [el('div', { class: 'verdict bad', testid: 'verdict' }, 'the objects cannot be used'), pre(r.error, 'error', 'diagnostic')];
      const seen = new Set();
      const warnings = [];
      for (const u of r.requests.flatMap((q) => q.unknown_attributes)) {
        const what = u.capacity !== undefined ? 'capacity' : 'attribute';
        const line = `warning: ${u.selector} reads ${what} ${JSON.stringify(u[what])}, which no device in the slices has${u.suggestion ? ` (did you mean ${JSON.stringify(u.suggestion)}?)` : ''}`;
        if (!seen.has(line)) warnings.push(line);
        seen.add(line);
      }
      const failed = r.requests.filter((q) => q.error || q.devices.some((d) => d.error !== undefined)).length;
      const devices = r.requests.length ? r.requests[0].devices.length : r.case.slices.reduce((n, s) => n + ((s.spec && s.spec.devices) || []).length, 0);
      // `cel dra`'s summary line.
      const out = [el('div', { class: `verdict ${failed || warnings.length ? 'bad' : 'ok'}`, testid: 'verdict' },
        `${plural(r.requests.length, 'request')}, ${plural(devices, 'device')}: ${failed} with errors, ${plural(warnings.length, 'warning')}`)];
      for (const q of r.requests) {
        const head = `${q.kind} ${q.claim}, request ${q.request} (class ${q.class})`;
        if (q.error) {
          out.push(el('h3', { testid: 'request' }, `${head}: error: ${q.error}`));
          continue;
        }
        const matched = q.devices.filter((d) => d.matched).length;
        out.push(el('h3', { testid: 'request' }, `${head}: ${matched} of ${q.devices.length} devices match`));
        out.push(table(['device', 'verdict'], q.devices.map((d) => ({
          testid: 'device',
          cells: [el('code', {}, `${d.driver}/${d.pool}/${d.device}`), el('span', { class: d.matched ? 'v-passed' : d.error !== undefined ? 'v-failed' : 'v-not-run' }, deviceVerdict(d))],
        }))));
      }
      if (warnings.length) out.push(list('Warnings', warnings, 'warnings'));
      const unapplied = [...new Set(r.requests.filter((q) => q.class_applied === false).map((q) => q.class))].sort();
      if (unapplied.length) out.push(list('Notes', unapplied.map((c) => `no DeviceClasses given: the selectors of DeviceClass ${JSON.stringify(c)} are not applied`), 'notes'));
      return out;
    },
  },

  authn: {
    fields: [
      { key: 'config', label: 'AuthenticationConfiguration', language: 'yaml', rows: 18 },
      { key: 'claims', label: 'The token\u2019s claims (its decoded payload; signatures are not checked)', language: 'yaml', rows: 10 },
    ],
    options: [
      versionOption(),
      { key: 'issuer', label: 'Issuer', kind: 'text', placeholder: 'the claims\u2019 iss' },
      { key: 'now', label: 'Now (seconds since 1970)', kind: 'number', placeholder: 'now' },
    ],
    // The time the token is presented: the page's clock unless one is given.
    prepare(request) {
      return request.now === undefined ? { ...request, now: Math.floor(Date.now() / 1000) } : request;
    },
    render(r) {
      if (!r.ok) {
        const word = r.phase === 'config' ? 'the configuration is invalid' : r.phase === 'input' ? 'bad input' : 'not authenticated';
        return [el('div', { class: 'verdict bad', testid: 'verdict' }, word), pre(r.error, 'error', 'diagnostic')];
      }
      const u = r.user;
      return [
        el('div', { class: 'verdict ok', testid: 'verdict' }, `authenticated by ${r.issuer}`),
        facts([
          ['username', u.username, 'username'],
          ['uid', u.uid, 'uid'],
          ['groups', JSON.stringify(u.groups), 'groups'],
          ['extra', JSON.stringify(u.extra), 'extra'],
        ]),
      ];
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

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function deviceVerdict(d) {
  if (d.matched) return 'matched';
  if (d.error !== undefined) return `error: ${d.allocator_error}`;
  return `not matched: ${d.path} is false`;
}

function list(title, items, id) {
  return el('div', { testid: id }, el('h3', {}, title), el('ul', {}, ...items.map((w) => el('li', {}, w))));
}
