//! Resource bounds: arbitrary bytes (as lossy UTF-8) as an expression in the newest
//! Kubernetes environment. Compiling it (parse, check, estimate, native code or the fallback
//! to the interpreter) and evaluating it on both backends under the per-call cost limit must
//! stay within time and memory bounds proportional to the input's size; a bound exceeded is a
//! crash. Compile time is bounded relative to a reference expression timed in the same
//! process, twenty times its time per reference length of input, so that only growth faster
//! than the input, not instrumentation or a busy machine, trips it. On top of that comes one
//! fixed allowance: compiling the program's constant regular expressions, which share a
//! bounded compiled size (`cel_runtime::regex::PROGRAM_SIZE_LIMIT`) but which a counted
//! repetition makes large from a few characters. Run without the sanitizer
//! (`-s none`), and do not suspend the process (a stopped evaluation looks slow).

#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the targets use the document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;
#[allow(dead_code, reason = "each target checks one of the properties")]
#[path = "common/properties.rs"]
mod properties;
#[allow(dead_code, reason = "one process, one measurement at a time: no need to take turns")]
#[path = "../../crates/celerity/tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{Counting, peak_during};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Compile time allowed: twenty times what a reference expression of [`REFERENCE_LEN`]
/// bytes takes in this process (so instrumentation, debug assertions and a busy machine
/// scale the bound too), for each [`REFERENCE_LEN`] bytes of input, and at least once.
fn compile_time_bound(n: usize) -> Duration {
    let units = 1 + n.div_ceil(REFERENCE_LEN) as u32;
    reference_compile_time() * 20 * units + pattern_allowance_time() * 3
}

/// How long spending a whole program's pattern allowance takes here (the fastest of three):
/// compiling a large pattern until the allowance is gone. Three times this is allowed: the
/// literal patterns of `matches` are compiled once to check them and once for the program,
/// and those of Kubernetes' `find` and `findAll` once to check them.
fn pattern_allowance_time() -> Duration {
    static TIME: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TIME.get_or_init(|| {
        (0..3)
            .map(|_| {
                let mut budget = cel_runtime::regex::PatternBudget::default();
                let started = Instant::now();
                while budget.compile("((abcdefghijklmnopqrstuvwxyz|u){100}){30}").is_ok() {}
                started.elapsed()
            })
            .min()
            .unwrap_or_default()
    })
}

/// A typical rule: selections, a comprehension, a string function, arithmetic.
const REFERENCE: &str = "self.spec.replicas > i && l.all(x, x % 2 == 0 || x < 7) && s.startsWith('st')";
const REFERENCE_LEN: usize = REFERENCE.len();

/// How long compiling [`REFERENCE`] takes here: the fastest of five.
fn reference_compile_time() -> Duration {
    static TIME: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TIME.get_or_init(|| {
        (0..5)
            .map(|_| {
                let started = Instant::now();
                let compiled = properties::compile_native(REFERENCE);
                assert!(compiled.is_some(), "the reference expression compiles");
                started.elapsed()
            })
            .min()
            .unwrap_or_default()
    })
}

/// Heap growth allowed while compiling: the program's constant patterns (three times, as above)
/// and a fixed and a proportional part for everything else.
fn compile_memory_bound(n: usize) -> usize {
    3 * cel_runtime::regex::PROGRAM_SIZE_LIMIT + (16 << 20) + (16 << 10) * n
}

/// Evaluation is bounded by the cost limit (1,000,000), not by the input: a fixed bound.
const EVAL_TIME: Duration = Duration::from_secs(3);
/// Heap growth allowed while evaluating: twice what an evaluation may build
/// (`cel_runtime::limits::MAX_BUILT_BYTES`).
const EVAL_MEMORY: usize = 512 << 20;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let n = text.len();

    let started = Instant::now();
    let (native, grew) = peak_during(|| properties::compile_native(&text));
    let took = started.elapsed();
    assert!(
        took <= compile_time_bound(n),
        "compiling {n} bytes took {took:?}: {text:?}"
    );
    assert!(
        grew <= compile_memory_bound(n),
        "compiling {n} bytes grew the heap by {grew} bytes: {text:?}"
    );
    let Some(native) = native else {
        return;
    };
    let interpreted =
        properties::compile_interpreted(&text).expect("the same program on the interpreter");
    for (name, program) in [("interpreter", &interpreted), ("native code", &native)] {
        let started = Instant::now();
        let ((), grew) = peak_during(|| properties::evaluate(program, &text, name));
        let took = started.elapsed();
        assert!(took <= EVAL_TIME, "{name} took {took:?}: {text:?}");
        assert!(
            grew <= EVAL_MEMORY,
            "{name} grew the heap by {grew} bytes: {text:?}"
        );
    }
});
