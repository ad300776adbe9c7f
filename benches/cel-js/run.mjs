// Times @marcbachmann/cel-js on the benchmark cases, the way `eval-min` times Celerity: each
// expression parsed once and its variables converted once (JSON integers become BigInt,
// cel-js's `int`), then the fastest of 40 timed rounds, in ns per evaluation. The value is
// checked against the case's expected value first. cel-js tracks no cost.
//
//   npm install && node run.mjs ../cases.json [CASE]
//
// V8 compiles the evaluator for what it has seen, so one case per process (CASE given) is
// cel-js at its fastest; all cases in one process can be up to twice as slow.
import {parse} from '@marcbachmann/cel-js'
import {readFileSync} from 'node:fs'

const file = JSON.parse(readFileSync(process.argv[2] ?? '../cases.json', 'utf8'))
const only = process.argv[3]
// `baseline_true` is added by the benches crate, not listed in the file.
const cases = [{name: 'baseline_true', expr: 'true', vars: {}, expected: true}, ...file.cases ?? file]

const toCel = (v) => {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v)
  if (Array.isArray(v)) return v.map(toCel)
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x)]))
  }
  return v
}

let sink = 0
for (const c of cases) {
  if (only && c.name !== only) continue
  let evaluate, vars
  try {
    evaluate = parse(c.expr)
    vars = toCel(c.vars ?? {})
    const got = evaluate(vars)
    if (String(got) !== String(toCel(c.expected))) {
      console.log(`${c.name}\twrong value: ${got}`)
      continue
    }
  } catch (e) {
    console.log(`${c.name}\terror: ${String(e.message).split('\n')[0]}`)
    continue
  }
  // Enough evaluations per round for about 20 ms.
  let n = 1000
  for (;;) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink ^= evaluate(vars) === true ? 1 : 0
    if (Number(process.hrtime.bigint() - start) > 2e7) break
    n *= 2
  }
  let best = Infinity
  for (let round = 0; round < 40; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink ^= evaluate(vars) === true ? 1 : 0
    best = Math.min(best, Number(process.hrtime.bigint() - start) / n)
  }
  console.log(`${c.name}\t${best.toFixed(1)}`)
}
if (sink === 2) console.log('')
