//! `eval-min`: the fastest of 40 timings of a case, in ns per evaluation, for comparing two
//! builds of the same machine state by running their binaries in turn.
//!
//! Criterion's medians, each from a fresh process, move by up to 2× between runs on a busy
//! shared VM; the fastest of many short timings in one process moves by a few percent. Two
//! builds compare well when their binaries run one after the other, several times each:
//!
//! ```text
//! cargo run --release -p benches --bin eval-min -- CASE [typed] [interpreter] [evaluations]
//! ```
//!
//! `typed` gives `self` the schema type the criterion benchmarks give it (for cases that
//! read only `self`), `interpreter` times the interpreter instead of native code; each
//! evaluation is `Program::eval_into` with cost tracking on, consumed as the criterion
//! benchmark consumes it. This is a measurement tool; no test depends on its timings.

use std::hint::black_box;
use std::time::Instant;

use celerity::{Backend, Value};

/// Timings, each of a share of the evaluations.
const ROUNDS: u64 = 40;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args
        .first()
        .ok_or("usage: eval-min CASE [typed] [interpreter] [evaluations]")?;
    let case = benches::cases()
        .into_iter()
        .find(|c| &c.name == name)
        .ok_or_else(|| format!("no case {name} in cases.json"))?;
    let has = |word: &str| args.iter().skip(1).any(|a| a == word);
    let evaluations: u64 = args
        .iter()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    let (env, activation) = if has("typed") {
        let typed = benches::typed(&case).ok_or("the case reads more than `self`")?;
        (typed.env, typed.activation)
    } else {
        (benches::env(&case), benches::activation(&case))
    };
    let backend = if has("interpreter") {
        Backend::Interpreter
    } else {
        Backend::Jit
    };
    let program = benches::program(&env, &case, backend, true);
    let mut slot = Value::Null;
    let per_round = (evaluations / ROUNDS).max(1);
    let mut fastest = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..per_round {
            let (outcome, details) = program.eval_into(black_box(&activation), &mut slot);
            black_box(outcome.is_ok());
            black_box(details.actual_cost);
            black_box(&slot);
        }
        fastest = fastest.min(start.elapsed().as_nanos() as f64 / per_round as f64);
    }
    if slot != benches::expected(&case) {
        return Err(format!("{name} gave {slot:?}"));
    }
    println!("{fastest:.1} ns/eval");
    Ok(())
}
