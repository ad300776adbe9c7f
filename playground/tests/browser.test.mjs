// The playground in a real browser: headless Chromium from Debian's packages, driven through
// Debian's chromedriver with selenium-webdriver, against `cel playground` (the page, its
// examples and its WebAssembly module, embedded in the binary). Each mode's examples run in
// the page, and what the page shows is compared with the native `cel` command's output for
// the same inputs; an expression with an error shows its caret; share links carrying markup
// show it as text; hostile inputs end with an error; a screenshot of each mode is kept.
//
//   CEL_BIN=target/release/cel node --test playground/tests/browser.test.mjs
//
// Needs /usr/bin/chromium and /usr/bin/chromedriver (apt install chromium chromium-driver)
// and a `cel` built after playground/build.sh. Without them the tests are skipped, except
// under CI=true, where that is a failure.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Builder, By, until } from 'selenium-webdriver';
import chrome from 'selenium-webdriver/chrome.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const celBin = resolve(process.env.CEL_BIN || join(repo, 'target/release/cel'));
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const chromedriver = process.env.CHROMEDRIVER || '/usr/bin/chromedriver';
const shots = resolve(process.env.SCREENSHOT_DIR || join(repo, 'docs/playground'));
const missing = [celBin, chromium, chromedriver].filter((p) => !existsSync(p));
if (missing.length && process.env.CI === 'true') throw new Error(`missing: ${missing.join(', ')}`);
const skip = missing.length ? `missing ${missing.join(', ')}` : false;
const catalogue = JSON.parse(readFileSync(join(repo, 'examples/playground.json'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'playground-test-'));

let server;
let driverProcess;
let driver;
let base;

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

function firstLine(child) {
  return new Promise((res, rej) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) res(buf.slice(0, nl));
    });
    child.on('exit', (code) => rej(new Error(`exited with ${code}`)));
  });
}

async function waitForHttp(url) {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

before(async () => {
  if (skip) return;
  server = spawn(celBin, ['playground', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await firstLine(server);
  base = line.match(/http:\/\/127\.0\.0\.1:\d+\//)[0];
  const port = await freePort();
  driverProcess = spawn(chromedriver, [`--port=${port}`], { stdio: 'ignore' });
  await waitForHttp(`http://127.0.0.1:${port}/status`);
  const options = new chrome.Options()
    .setChromeBinaryPath(chromium)
    .addArguments('--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
      `--user-data-dir=${mkdtempSync(join(tmpdir(), 'chromium-'))}`, '--window-size=1280,1000');
  driver = await new Builder().usingServer(`http://127.0.0.1:${port}`).forBrowser('chrome').setChromeOptions(options).build();
});

after(async () => {
  if (driver) await driver.quit();
  if (driverProcess) driverProcess.kill();
  if (server) server.kill();
});

// ---- The page. ----

async function runs() {
  return Number(await driver.executeScript('return document.body.dataset.runs || 0'));
}

/** Waits until the page has evaluated more than `before` times and is idle; the result as JSON. */
async function resultAfter(before) {
  await driver.wait(async () => (await runs()) > before && (await driver.executeScript('return document.body.dataset.state')) === 'done', 60000);
  return JSON.parse(await driver.executeScript("return document.getElementById('raw').textContent"));
}

async function open(url = base) {
  // A new document each time: a link that differs in its fragment alone would not reload.
  await driver.get('about:blank');
  await driver.get(url);
  return resultAfter(0);
}

async function chooseExample(x) {
  if (!(await driver.getCurrentUrl()).startsWith(base)) await open();
  if (await driver.executeScript('return document.querySelector("#modes [aria-selected=true]")?.dataset.mode') !== x.mode) {
    const n = await runs();
    await driver.findElement(By.css(`#modes button[data-mode="${x.mode}"]`)).click();
    await resultAfter(n);
  }
  const n = await runs();
  const select = await driver.findElement(By.id('examples'));
  await select.findElement(By.xpath(`./option[normalize-space(.)=${xpathString(x.title)}]`)).click();
  return resultAfter(n);
}

function xpathString(s) {
  return s.includes("'") ? `concat('${s.split("'").join("', \"'\", '")}')` : `'${s}'`;
}

/** The page's inputs, as the mode's request has them. */
async function inputs() {
  return driver.executeScript(`
    const v = {};
    for (const e of document.querySelectorAll('#inputs textarea, #inputs select, #inputs input')) {
      v[e.name] = e.type === 'checkbox' ? e.checked : e.value;
    }
    return v;`);
}

async function text(testid) {
  const found = await driver.findElements(By.css(`#result [data-testid="${testid}"]`));
  return found.length ? found[0].getText() : null;
}

async function screenshot(name) {
  mkdirSync(shots, { recursive: true });
  writeFileSync(join(shots, `${name}.png`), Buffer.from(await driver.takeScreenshot(), 'base64'));
}

// ---- The native command. ----

function cel(args, input) {
  const r = spawnSync(celBin, args, { input, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name, contents) {
  const p = join(scratch, name);
  writeFileSync(p, contents);
  return p;
}

/** Whether the expression mode's environment is one of the places (`cel eval --env NAME`). */
function isPlace(v) {
  return !['default', 'kubernetes'].includes(v.environment);
}

function profileArgs(v) {
  if (v.environment === 'default') return [];
  if (isPlace(v)) return ['--env', v.environment, '--profile', `kubernetes=${v.version}`];
  return ['--profile', `kubernetes=${v.version}`, ...(v.stored ? ['--stored'] : [])];
}

function declArgs(v) {
  return v.declarations.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')).flatMap((l) => ['--decl', l.replace(/\s*:\s*/, ':')]);
}

// ---- Tests. ----

test('the page loads and evaluates within its budget', { skip }, async () => {
  await open();
  const t = await driver.executeScript('return window.celerityTimings');
  console.log(`module ready ${t.moduleReady.toFixed(0)} ms, first evaluation ${t.firstResult.toFixed(0)} ms after navigation`);
  assert.ok(t.firstResult < 1000, `first evaluation ${t.firstResult} ms after the page began to load`);
  const foreign = await driver.executeScript("return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith(location.origin))");
  assert.deepEqual(foreign, [], 'the page loads nothing from other origins');
});

test('expression examples give the native command\'s values, types, costs and estimates', { skip }, async () => {
  for (const x of catalogue.filter((e) => e.mode === 'expression')) {
    const got = await chooseExample(x);
    const v = await inputs();
    const args = [...profileArgs(v), ...declArgs(v), '--vars', file('vars.json', v.variables)];
    const native = JSON.parse(cel(['eval', '--output', 'json', '--cost', ...args, v.expression]).stdout);
    assert.equal(got.ok, native.ok, x.title);
    if (native.ok) {
      assert.equal(got.value, native.value, x.title);
      assert.equal(got.type, native.type, x.title);
      assert.equal(await text('value'), native.value);
      assert.equal(await text('type'), native.type);
    } else {
      assert.equal(got.phase, native.phase, x.title);
      assert.equal(got.error, native.error, x.title);
      assert.equal(await text('error'), native.error);
    }
    assert.equal(got.cost, native.cost, `${x.title}: cost`);
    if (native.cost !== undefined) assert.equal(await text('cost'), native.cost.toLocaleString('en-US'));
    if (isPlace(v)) {
      // `cel eval --env` gives the estimate itself; the place's own cost limit applies.
      if (native.ok) assert.deepEqual([got.estimate.min, got.estimate.max], [native.est_min, native.est_max], `${x.title}: estimate`);
      assert.equal(got.cost_limit, 1000000, `${x.title}: the place's per-call limit`);
      assert.equal(await text('cost-limit'), '1,000,000');
      if (x.options.environment === 'dra-selector') await screenshot('selector');
      continue;
    }
    const estimate = cel(['cost', ...args.slice(0, -2), v.expression]);
    if (estimate.status === 0) {
      assert.equal(`[${got.estimate.min}, ${got.estimate.max}]`, estimate.stdout.trim(), `${x.title}: estimate`);
    }
    if (x === catalogue[0]) await screenshot('expression');
  }
});

test('CRD examples give the native command\'s verdicts, messages and costs', { skip }, async () => {
  for (const x of catalogue.filter((e) => e.mode === 'crd')) {
    const got = await chooseExample(x);
    assert.equal(got.ok, true, x.title);
    const v = await inputs();
    const args = ['validate', '--output', 'json', '--profile', `kubernetes=${v.version}`, '--crd', file('crd.yaml', v.crd)];
    if (v.old_object.trim()) args.push('--old', file('old.yaml', v.old_object));
    args.push(file('object.yaml', v.object));
    const native = JSON.parse(cel(args).stdout.split('\n')[0]);
    const page = got.validation;
    assert.equal(page.valid, native.valid, x.title);
    assert.deepEqual(page.errors, native.errors, x.title);
    assert.deepEqual(page.warnings, native.warnings, x.title);
    assert.equal(page.message, native.message, x.title);
    assert.deepEqual(page.status, native.status, x.title);
    assert.equal(page.name, native.name, x.title);
    assert.equal(page.namespace, native.namespace, x.title);
    if (native.message) assert.equal(await text('message'), native.message);
    // Each rule the page calls failed has its message among the command's errors, and
    // every rule error the command reports is a failed rule's.
    const failed = got.rules.filter((r) => r.verdict === 'failed');
    const details = native.errors.map((e) => e.detail);
    for (const r of failed) {
      if (!r.message_expression) assert.ok(details.includes(r.message || `failed rule: ${r.rule}`), `${x.title}: ${r.rule}`);
    }
    const verdicts = await driver.findElements(By.css('[data-testid="rule-verdict"]'));
    assert.equal(verdicts.length, got.rules.length);
    // The run-time cost of the rules, taken from the same per-object budget.
    assert.equal(page.runtime_cost, native.runtime_cost, `${x.title}: run-time cost`);
    assert.ok(page.runtime_cost > 0, `${x.title}: the rules cost something`);
    assert.equal(await text('runtime-cost'), `${page.runtime_cost.toLocaleString('en-US')} of the budget of ${got.budget.toLocaleString('en-US')}`);
    if (x === catalogue.find((e) => e.mode === 'crd')) await screenshot('crd');
  }
});

test('admission examples give the native command\'s responses', { skip }, async () => {
  for (const x of catalogue.filter((e) => e.mode === 'admission')) {
    const got = await chooseExample(x);
    assert.equal(got.ok, true, `${x.title}: ${got.error}`);
    // The same request through `cel admit --batch`: the same response, line for line.
    const line = JSON.parse(cel(['admit', '--batch', '-'], `${JSON.stringify(got.case)}\n`).stdout);
    const { case: _, ...response } = got;
    assert.deepEqual(response, line, x.title);
    // And through `cel admit`'s own reading of the files.
    const v = await inputs();
    const args = ['admit', '--output', 'json', '--policy', file('policies.yaml', v.policies), '--operation', v.operation];
    if (v.params.trim()) args.push('--params', file('params.yaml', v.params));
    if (v.namespaces.trim()) args.push('--namespace', file('namespaces.yaml', v.namespaces));
    if (v.authz.trim()) args.push('--authz', file('authz.yaml', v.authz));
    if (v.user) args.push('--user', v.user);
    for (const g of v.groups.split(',').map((s) => s.trim()).filter(Boolean)) args.push('--group', g);
    args.push(file('object.yaml', v.object));
    const native = JSON.parse(cel(args).stdout.split('\n')[0]);
    assert.equal(got.allowed, native.allowed, x.title);
    assert.deepEqual(got.status, native.status, x.title);
    assert.deepEqual(got.warnings, native.warnings, x.title);
    assert.deepEqual(got.audit_annotations, native.audit_annotations, x.title);
    assert.equal(await text('verdict'), got.allowed ? 'allowed' : `denied (${got.status.code} ${got.status.reason})`);
    if (x === catalogue.find((e) => e.mode === 'admission')) await screenshot('admission');
  }
});

test('place environments check the result type and version as the API server does', { skip }, async () => {
  const cases = [
    // A selector that is not a bool: the DRA library's conversion error, at run time.
    { environment: 'dra-selector', version: '1.34', expression: 'device.attributes["gpu.example.com"].model', variables: '{"device": {"driver": "gpu.example.com", "attributes": {"model": {"string": "a100"}}}}' },
    // A match condition that is not a bool: refused when it compiles.
    { environment: 'admission-webhook-match', version: '1.34', expression: 'object.metadata.name', variables: '{"object": {"metadata": {"name": "web"}}}' },
    // A user validation rule that reads a field of the user.
    { environment: 'authn-user', version: '1.30', expression: "user.groups.exists(g, g == 'admins')", variables: '{"user": {"username": "jane", "groups": ["devs"]}}' },
  ];
  for (const c of cases) {
    const got = await open(shareLink({ mode: 'expression', ...c }));
    const native = JSON.parse(cel(['eval', '--output', 'json', '--cost', ...profileArgs(c), '--vars', file('vars.json', c.variables), c.expression]).stdout);
    assert.equal(got.ok, native.ok, c.environment);
    assert.equal(got.error, native.error, c.environment);
    assert.equal(got.value, native.value, c.environment);
    // A compile error has no cost (the command prints 0).
    assert.equal(got.cost ?? 0, native.cost, c.environment);
    if (!native.ok) {
      assert.equal(got.phase, native.phase, c.environment);
      assert.equal(await text('error'), native.error);
    }
  }
  // A place that did not exist in a version is an error for that version.
  const old = await open(shareLink({ mode: 'expression', environment: 'dra-selector', version: '1.30', expression: 'true' }));
  assert.equal(old.phase, 'input');
  assert.match(old.error, /dra-selector: Kubernetes 1\.30 has no such expressions/);
});

/** `cel dra`'s text report as the page shows it: the request and device lines, the warnings, the summary. */
async function draLines() {
  return driver.executeScript(`
    const r = document.getElementById('result');
    const lines = [...r.querySelectorAll('[data-testid=request], [data-testid=device]')].map((e) =>
      e.dataset.testid === 'request' ? e.textContent : '  ' + [...e.cells].map((c) => c.textContent).join(': '));
    const warnings = [...r.querySelectorAll('[data-testid=warnings] li')].map((e) => e.textContent);
    return [...lines, ...warnings, r.querySelector('[data-testid=verdict]').textContent];`);
}

test('device-allocation examples give `cel dra`\'s verdicts, line for line', { skip }, async () => {
  const examples = catalogue.filter((e) => e.mode === 'dra');
  assert.ok(examples.length >= 2);
  for (const x of examples) {
    const got = await chooseExample(x);
    assert.equal(got.ok, true, `${x.title}: ${got.error}`);
    const v = await inputs();
    const profile = ['--profile', `kubernetes=${v.version}`];
    // The same objects through `cel dra --batch`: the same reports (the page adds each
    // rejected device's selector path and allocator error).
    const line = JSON.parse(cel(['dra', ...profile, '--batch', '-'], `${JSON.stringify(got.case)}\n`).stdout);
    const stripped = got.requests.map((q) => ({ ...q, devices: q.devices.map(({ path, allocator_error, ...d }) => d) }));
    assert.deepEqual(stripped, line.requests, x.title);
    // And `cel dra`'s own reading of the files, whose report the page shows line for line.
    const args = ['dra', ...profile, '--slices', file('slices.yaml', v.slices)];
    if (v.classes.trim()) args.push('--class', file('classes.yaml', v.classes));
    args.push(file('claims.yaml', v.claims));
    const native = cel(args).stdout.trimEnd().split('\n').filter((l) => !l.startsWith('note:'));
    assert.deepEqual(await draLines(), native, x.title);
    if (!v.classes.trim()) assert.ok((await text('notes')).includes('are not applied'), x.title);
    if (x === examples[0]) await screenshot('dra');
  }
});

test('authentication examples give `cel authn`\'s users and errors', { skip }, async () => {
  const examples = catalogue.filter((e) => e.mode === 'authn');
  assert.ok(examples.length >= 2);
  for (const x of examples) {
    const got = await chooseExample(x);
    const v = await inputs();
    const native = JSON.parse(cel(['authn', '--output', 'json', '--profile', `kubernetes=${v.version}`, '--now', v.now,
      '--config', file('authn.yaml', v.config), '--claims', file('claims.json', v.claims)]).stdout);
    assert.equal(got.ok, native.ok, x.title);
    assert.deepEqual(got.user, native.user, x.title);
    assert.equal(got.error, native.error, x.title);
    if (native.ok) {
      assert.equal(await text('username'), native.user.username);
      assert.equal(await text('groups'), JSON.stringify(native.user.groups));
    } else assert.equal(await text('error'), native.error);
    if (x === examples[0]) await screenshot('authn');
  }
});

test('markup in device names, selectors and claims shows as text', { skip }, async () => {
  const img = '<img src=x onerror=window.pwned=3>';
  const slices = readFileSync(join(repo, 'examples/dra/slices.yaml'), 'utf8').replace('- name: gpu-1', `- name: "${img}"`);
  const claims = readFileSync(join(repo, 'examples/dra/claims.yaml'), 'utf8').replace('.migg', `["${img}"]`);
  const dra = await open(shareLink({ mode: 'dra', version: '1.34', slices, claims }));
  assert.equal(dra.ok, true, JSON.stringify(dra).slice(0, 300));
  const lines = await draLines();
  assert.ok(lines.includes(`  gpu.example.com/node-a/${img}: matched`), lines.join('\n'));
  assert.ok(lines.some((l) => l.endsWith(`no such key: ${img}`)), lines.join('\n'));
  assert.ok(lines.some((l) => l.startsWith('warning:') && l.includes(img)), lines.join('\n'));
  const config = readFileSync(join(repo, 'examples/authn/config.yaml'), 'utf8');
  const token = JSON.parse(readFileSync(join(repo, 'examples/authn/claims.json'), 'utf8'));
  token.email = `${img}@example.com`;
  token.roles = `${img},oncall`;
  const authn = await open(shareLink({ mode: 'authn', now: 1767225600, config, claims: JSON.stringify(token) }));
  assert.equal(authn.ok, true, JSON.stringify(authn));
  assert.equal(await text('username'), `oidc:${img}@example.com`);
  assert.ok((await text('groups')).includes(img));
  const injected = await driver.executeScript("return [window.pwned, document.querySelectorAll('img').length, document.querySelectorAll('script').length]");
  assert.deepEqual(injected, [null, 0, 1]);
});

test('a typed expression with an error shows cel-go\'s caret and marks the position', { skip }, async () => {
  await chooseExample(catalogue.find((e) => e.mode === 'expression'));
  const editor = await driver.findElement(By.css('textarea[name="expression"]'));
  await editor.clear();
  const n = await runs();
  await editor.sendKeys("self.replicas + 'x' == 2");
  let got = await resultAfter(n);
  while (got.phase !== 'compile') got = await resultAfter(await runs());
  const v = await inputs();
  const native = cel(['eval', ...profileArgs(v), '--vars', file('vars.json', v.variables), v.expression]);
  assert.equal(native.status, 1);
  assert.equal(got.error, native.stderr.trimEnd());
  assert.equal(await text('error'), native.stderr.trimEnd());
  assert.match(got.error, /\n \| \.+\^$/);
  const marked = await driver.executeScript("return [...document.querySelectorAll('.error-mark')].map(e => e.textContent)");
  const column = got.diagnostics[0].column;
  assert.deepEqual(marked, [v.expression[column]]);
  await screenshot('diagnostic');
});

/** A share link (the form that needs no compression) for a state. */
function shareLink(state) {
  return `${base}#j=${Buffer.from(JSON.stringify(state)).toString('base64url')}`;
}

test('share links keep the state, and markup in them shows as text', { skip }, async () => {
  const script = '<script>window.pwned = 1</script>';
  const img = '<img src=x onerror=window.pwned=2>';
  const got = await open(shareLink({
    mode: 'expression', environment: 'kubernetes', version: '1.30',
    expression: `'${img}' + ${script}`, variables: `{"${img.replace(/"/g, '\\"')}": 1}`,
  }));
  assert.equal(got.phase, 'compile');
  const shown = await text('error');
  assert.ok(shown.includes('<script>'), shown);
  const editorText = await driver.executeScript("return document.querySelector('.editor pre').textContent");
  assert.ok(editorText.includes(img));
  assert.equal(await driver.executeScript("return document.querySelector('select[name=version]').value"), '1.30');
  const crdLink = shareLink({
    mode: 'crd',
    crd: readFileSync(join(repo, 'examples/crd/webapps.yaml'), 'utf8').replace('replicas must be between minReplicas and maxReplicas', `${script}${img}`),
    object: readFileSync(join(repo, 'examples/crd/manifests/invalid.yaml'), 'utf8').split('\n---')[0],
  });
  const crd = await open(crdLink);
  assert.equal(crd.ok, true, JSON.stringify(crd).slice(0, 300));
  assert.ok(crd.validation.errors.some((e) => e.detail === `${script}${img}`), JSON.stringify(crd.validation.errors));
  assert.ok((await text('message')).includes(`${script}${img}`));
  const injected = await driver.executeScript("return [window.pwned, document.querySelectorAll('img').length, document.querySelectorAll('script').length]");
  assert.deepEqual(injected, [null, 0, 1]);
  // The page's own link round-trips: the address after an evaluation restores it.
  const again = await open(await driver.getCurrentUrl());
  assert.deepEqual(again, crd);
});

test('hostile inputs end with an error in the page', { skip }, async () => {
  await open(shareLink({ mode: 'expression', expression: '1' }));
  const cases = [
    ['a 5 MB paste', 'expression', 'x'.repeat(5 << 20)],
    ['10,000 levels of nesting', 'expression', `${'['.repeat(10000)}1${']'.repeat(10000)}`],
    ['10,000 levels of YAML', 'variables', `x: ${'['.repeat(10000)}1${']'.repeat(10000)}`],
    ['a regular-expression bomb', 'expression', "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a|a?)+$') && 'x'.matches('((a{1,100}){1,100}){1,100}')"],
  ];
  for (const [what, field, value] of cases) {
    const n = await runs();
    await driver.executeScript(`
      const t = document.querySelector('textarea[name="${field}"]');
      t.value = arguments[0];
      t.dispatchEvent(new Event('input'));`, value);
    const got = await resultAfter(n);
    assert.equal(got.ok, false, `${what}: ${JSON.stringify(got).slice(0, 200)}`);
    assert.ok((await text('error')).length > 0, what);
    await driver.executeScript(`
      const t = document.querySelector('textarea[name="${field}"]');
      t.value = ''; t.dispatchEvent(new Event('input'));`);
    await resultAfter(n + 1);
  }
});

test('the page fits a phone\'s screen', { skip }, async () => {
  await driver.manage().window().setRect({ width: 390, height: 844 });
  try {
    await open(`${base}`);
    await screenshot('phone');
    const overflow = await driver.executeScript('return document.documentElement.scrollWidth - window.innerWidth');
    const widest = await driver.executeScript(`return [...document.querySelectorAll('body *')]
      .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 5).join(' ')`);
    assert.ok(overflow <= 0, `${overflow} px wider than the screen: ${widest}`);
  } finally {
    await driver.manage().window().setRect({ width: 1280, height: 1000 });
  }
});
