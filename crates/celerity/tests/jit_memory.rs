//! Compiled programs free their code: compiling and dropping 20,000 programs leaves the
//! process's memory bounded. (Without `free_memory`, each program's code pages would stay
//! mapped: about 4 KiB or more each, 80 MiB and more here.)

use celerity::{Backend, Env, MapActivation, ProgramOptions, Type, Value};

/// The resident set size in bytes, from `/proc/self/statm` (Linux).
fn rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn twenty_thousand_programs_compile_and_drop_in_bounded_memory() {
    let env = Env::builder().variable("x", Type::Int).build();
    let vars = MapActivation::new().with("x", 3i64);
    let options = ProgramOptions::default().backend(Backend::Jit);
    let exprs = [
        "x * 2 + 1 > 6",
        "[1, 2, x].map(i, i * x).exists(i, i == 9)",
        "string(x) + 'a'",
    ];
    let asts: Vec<_> = exprs.iter().map(|e| env.compile(e).unwrap()).collect();
    let run = |n: usize| {
        for i in 0..n {
            let ast = &asts[i % asts.len()];
            let p = env.program_with(ast, options).unwrap();
            assert_eq!(p.backend(), Backend::Jit);
            let v = p.eval(&vars).unwrap();
            assert!(matches!(v, Value::Bool(true) | Value::String(_)));
        }
    };
    // Warm up: allocator pools, the instruction-set description, thread-local caches.
    run(1_000);
    let Some(before) = rss() else {
        eprintln!("note: no /proc/self/statm; checking only that 20,000 programs compile");
        run(20_000);
        return;
    };
    run(20_000);
    let after = rss().unwrap_or(before);
    let growth = after.saturating_sub(before);
    assert!(
        growth < 24 << 20,
        "resident memory grew by {} KiB over 20,000 programs",
        growth >> 10
    );
}
