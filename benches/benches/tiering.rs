//! Tiering: the latency of each of the first 1,000 evaluations of a fresh program under
//! `Backend::Auto`, with the compile on the request path (the executor runs the compile task
//! inline, on the evaluation that submits it: the synchronous tiering Celerity had before)
//! and off it (the default background thread; every evaluation is interpreted until the
//! native program is published).
//!
//! For a few cases of `cases.json` in the newest Kubernetes environment, each run makes a
//! fresh program, times its first 1,000 evaluations one by one, then waits for its compile to
//! end; the runs of both modes alternate. Printed per case and mode: p50, p99, p99.9 and max
//! over every run's 1,000 latencies; the latency of the [`Backend::AUTO_JIT_AFTER`]th
//! evaluation (the one that submits the compile), median and slowest over the runs; the
//! median compile time (from the compile hook); and the index of the first evaluation that
//! ran native code (median over the runs that switched within 1,000; "never" if none did).
//!
//! On a machine whose cores are all busy, the background thread competes with the
//! evaluating thread for a core (the scheduler may even run it on the evaluating thread's
//! core at once, when the submit wakes it), so the numbers depend on the machine's load. To
//! measure the compile on a core of its own, run the bench's executable under `taskset -c 0`
//! and move the thread named `celerity-compile` to another core (`taskset -p -c 1 TID`)
//! once it exists.
//!
//! Percentiles and not criterion's means, because the point is the tail: the one slow
//! evaluation in a thousand. Run it in release mode (`cargo bench` does):
//!
//! ```text
//! cargo bench -p benches --bench tiering [-- --runs N]
//! ```

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use benches::BenchCase;
use celerity::{Backend, CompileTask, Env, MapActivation, NativeStatus, Program};

/// How many evaluations of each fresh program are timed.
const EVALUATIONS: usize = 1_000;

/// Runs per case and mode unless `--runs N` says otherwise.
const DEFAULT_RUNS: usize = 100;

/// The cases timed: a short comparison chain, a string function, a comprehension over a
/// list of objects, and two comprehensions over 100 elements (one with a regex per element).
const CASES: &[&str] = &[
    "replicas_range",
    "starts_with",
    "widgets_exists",
    "names_match_details_100",
    "map_keys_all_matches_100",
];

/// Where the compile runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Inline, on the evaluation that submits it (the old synchronous tiering).
    Synchronous,
    /// On Celerity's background thread.
    Background,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Synchronous => "synchronous (before)",
            Mode::Background => "background (after)",
        }
    }
}

/// One case's environment in one mode, and the compile times its hook heard.
struct Subject {
    env: Env,
    compile_times: Arc<Mutex<Vec<Duration>>>,
}

impl Subject {
    fn new(base: &Env, mode: Mode) -> Subject {
        let compile_times = Arc::new(Mutex::new(Vec::new()));
        let heard = compile_times.clone();
        // Every run times a fresh program's first compile: no cache of native programs.
        let mut builder = base
            .extend()
            .native_cache(0)
            .on_native_compile(move |report| {
                assert_eq!(
                    report.outcome,
                    NativeStatus::Compiled,
                    "{}",
                    report.expression
                );
                heard.lock().unwrap().push(report.compile_time);
            });
        if mode == Mode::Synchronous {
            builder = builder.compile_executor(CompileTask::run);
        }
        Subject {
            env: builder.build(),
            compile_times,
        }
    }
}

/// The latencies of one run, and the index (from 1) of its first native evaluation.
struct Run {
    latencies: Vec<Duration>,
    first_native: Option<usize>,
}

/// Times the first [`EVALUATIONS`] evaluations of a fresh program, then waits for its
/// compile to end, so that the next run starts with an idle compile thread.
fn run(subject: &Subject, case: &BenchCase, activation: &MapActivation) -> Run {
    let expected = benches::expected(case);
    let ast = subject.env.compile(&case.expr).expect("the case compiles");
    let program = subject.env.program(&ast).expect("the case's program");
    let mut latencies = Vec::with_capacity(EVALUATIONS);
    let mut first_native = None;
    for i in 0..EVALUATIONS {
        let started = Instant::now();
        let (result, details) = program.eval_details(black_box(activation));
        latencies.push(started.elapsed());
        assert_eq!(result.ok().as_ref(), Some(&expected), "{}", case.name);
        if first_native.is_none() && details.backend == Backend::Jit {
            first_native = Some(i + 1);
        }
    }
    wait_for_compile(&program);
    Run {
        latencies,
        first_native,
    }
}

fn wait_for_compile(program: &Program) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while matches!(
        program.native_status(),
        NativeStatus::Pending | NativeStatus::Compiling
    ) {
        assert!(Instant::now() < deadline, "no compile after 60 s");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The nearest-rank percentile `p` (0 < p <= 1) of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn median<T: Ord + Copy>(mut values: Vec<T>) -> Option<T> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

fn micros(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6)
}

/// Prints one table row: the case, the mode, the percentiles, the compile time and the
/// first native evaluation.
fn report(case: &str, mode: Mode, runs: &[Run], compile_times: Vec<Duration>) {
    let mut all: Vec<Duration> = runs
        .iter()
        .flat_map(|r| r.latencies.iter().copied())
        .collect();
    all.sort_unstable();
    let threshold = Backend::AUTO_JIT_AFTER as usize - 1;
    let mut at_threshold: Vec<Duration> = runs.iter().map(|r| r.latencies[threshold]).collect();
    at_threshold.sort_unstable();
    let first_native = median(runs.iter().filter_map(|r| r.first_native).collect());
    println!(
        "| {case} | {} | {} | {} | {} | {} | {} / {} | {} | {} |",
        mode.name(),
        micros(percentile(&all, 0.50)),
        micros(percentile(&all, 0.99)),
        micros(percentile(&all, 0.999)),
        micros(*all.last().expect("samples")),
        micros(percentile(&at_threshold, 0.50)),
        micros(*at_threshold.last().expect("runs")),
        median(compile_times).map_or("-".to_string(), micros),
        first_native.map_or("never".to_string(), |i| i.to_string()),
    );
}

fn runs_from_args() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_RUNS)
}

/// Makes the process-wide pieces (Cranelift's instruction set, the background thread and
/// its Cranelift contexts) exist before anything is timed, in both modes.
fn warm_up(base: &Env, case: &BenchCase, activation: &MapActivation) {
    for mode in [Mode::Synchronous, Mode::Background] {
        run(&Subject::new(base, mode), case, activation);
    }
}

fn main() {
    let runs = runs_from_args();
    let cases: Vec<BenchCase> = benches::cases()
        .into_iter()
        .filter(|c| CASES.contains(&c.name.as_str()))
        .collect();
    println!(
        "First {EVALUATIONS} evaluations of a fresh Backend::Auto program, {runs} runs per case \
         and mode (latencies in µs, over all runs' evaluations; compile: median µs)\n"
    );
    println!(
        "| case | tiering | p50 | p99 | p99.9 | max | eval #{}: median / max | compile | first native eval |",
        Backend::AUTO_JIT_AFTER
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for case in &cases {
        let base = benches::env(case);
        let activation = benches::activation(case);
        warm_up(&base, case, &activation);
        let subjects = [Mode::Synchronous, Mode::Background].map(|m| (m, Subject::new(&base, m)));
        let mut results: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..runs {
            for (i, (_, subject)) in subjects.iter().enumerate() {
                results[i].push(run(subject, case, &activation));
            }
        }
        for ((mode, subject), runs) in subjects.iter().zip(&results) {
            let times = subject.compile_times.lock().unwrap().clone();
            report(&case.name, *mode, runs, times);
        }
    }
}
