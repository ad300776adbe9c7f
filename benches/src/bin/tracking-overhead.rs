//! `tracking-overhead`: what counting the cost adds to native code, case by case, measured
//! so that the placement of one program's code does not decide the answer.
//!
//! Criterion runs each benchmark in its own process, and this VM moves a small native
//! program's time by up to 30% from one process to the next (where its code and data land),
//! in both directions: the "tracking overhead" column of one run is mostly that. Here one
//! process makes eight programs of each kind (cost tracking on, and off), times each in
//! turn for several rounds, and compares the medians:
//!
//! ```text
//! cargo run --release -p benches --bin tracking-overhead [CASE...]
//! ```
//!
//! The cases and their set-up are those of the criterion benchmarks (`benches::env`,
//! `Program::eval_into`). This is a measurement tool; no test depends on its timings.

use std::hint::black_box;
use std::time::Instant;

use celerity::{Backend, Value};

/// Programs of each kind, and rounds over all of them.
const PROGRAMS: usize = 8;
const ROUNDS: usize = 5;
/// Evaluations per timing.
const EVALUATIONS: u32 = 20_000;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    println!("| case | tracked | untracked | overhead |");
    println!("|---|---:|---:|---:|");
    for case in benches::cases() {
        if !wanted.is_empty() && !wanted.contains(&case.name) {
            continue;
        }
        let env = benches::env(&case);
        let act = benches::activation(&case);
        let programs: Vec<(bool, celerity::Program)> = (0..2 * PROGRAMS)
            .map(|i| {
                let track = i % 2 == 0;
                (track, benches::program(&env, &case, Backend::Jit, track))
            })
            .collect();
        let (mut tracked, mut untracked) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            for (track, program) in &programs {
                let mut slot = Value::Null;
                let start = Instant::now();
                for _ in 0..EVALUATIONS {
                    let (outcome, details) = program.eval_into(black_box(&act), &mut slot);
                    black_box(outcome.is_ok());
                    black_box(details.actual_cost);
                }
                let ns = start.elapsed().as_secs_f64() * 1e9 / f64::from(EVALUATIONS);
                if *track {
                    tracked.push(ns);
                } else {
                    untracked.push(ns);
                }
            }
        }
        let (t, u) = (median(tracked), median(untracked));
        println!(
            "| {} | {t:.1} ns | {u:.1} ns | {:+.0}% |",
            case.name,
            (t / u - 1.0) * 100.0
        );
    }
}
