// Runs a wasm32-wasip1 program under Node's WASI (node:wasi, from Debian's or any Node 20+),
// as cargo's runner for that target:
//
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node tools/wasi/run.mjs" cargo test --target wasm32-wasip1 ...
//   node tools/wasi/run.mjs target/wasm32-wasip1/release/spec-tests.wasm --file basic
//
// The program sees the current directory and the directories of the environment variables
// it is told about (CEL_SPEC_DIR and CARGO_MANIFEST_DIR, where set) at their own absolute
// paths, the process's environment, and its arguments. Its exit status is this process's.
// Nothing else of the machine is reachable: WASI has no network, and only these
// directories are opened to it.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import process from 'node:process';
import { WASI } from 'node:wasi';

const [program, ...args] = process.argv.slice(2);
if (!program) {
  console.error('usage: node tools/wasi/run.mjs PROGRAM.wasm [ARGS...]');
  process.exit(2);
}
const dirs = new Set([process.cwd()]);
for (const name of ['CEL_SPEC_DIR', 'CARGO_MANIFEST_DIR', 'WASI_DIRS']) {
  for (const dir of (process.env[name] || '').split(':')) {
    if (dir && existsSync(dir)) dirs.add(resolve(dir));
  }
}
const preopens = {};
for (const dir of dirs) preopens[dir] = dir;
// Relative paths resolve against the WASI program's notion of the current directory: PWD.
const env = { ...process.env, PWD: process.cwd() };
const wasi = new WASI({ version: 'preview1', args: [program, ...args], env, preopens, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
