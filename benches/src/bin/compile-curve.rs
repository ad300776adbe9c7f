//! `compile-curve`: how long preparing a program takes as expressions grow, per backend.
//!
//! For each shape of expression an attacker (or a generator) can make long — list and map
//! literals, `&&` chains, `||` chains of comprehensions, nested `cel.bind`, nested ternaries,
//! string concatenations, nested comprehensions reading a map declared outside them — and
//! sizes up to Kubernetes' limit of 100,000 code points, it prints the median time to
//! compile (parse, check, plan) for the interpreter and with
//! `Backend::Jit` (which adds lowering and native code, or stops at the native-code budget
//! and interprets), and whether native code was made. Run it in release mode:
//!
//! ```text
//! cargo run --release -p benches --bin compile-curve
//! ```
//!
//! The environment is the newest Kubernetes environment with `a: int`, `s: string` and
//! `m: map(string, dyn)` declared (the default profile for the shapes that need
//! `cel.bind`). This is a measurement tool; no test depends on its timings.

use std::time::{Duration, Instant};

use celerity::kubernetes::KubernetesEnv;
use celerity::{Backend, Env, EnvOptions, ProgramOptions, Type};

/// The longest expression Kubernetes accepts, in code points.
const MAX_CODE_POINTS: usize = 100_000;

/// A shape: its name and the expression with `n` repetitions.
struct Shape {
    name: &'static str,
    make: fn(usize) -> String,
    /// Whether it needs `cel.bind`, which Kubernetes does not have (the default profile,
    /// every cel-go extension, is used then).
    bindings: bool,
}

fn list(n: usize) -> String {
    format!("[{}].size() > 0", vec!["a"; n].join(", "))
}

fn map(n: usize) -> String {
    let entries: Vec<String> = (0..n).map(|i| format!("{i}: a")).collect();
    format!("{{{}}}.size() > 0", entries.join(", "))
}

fn and_chain(n: usize) -> String {
    vec!["a == 1"; n].join(" && ")
}

fn exists_chain(n: usize) -> String {
    vec!["[a].exists(x, x == 2)"; n].join(" || ")
}

fn bind_chain(n: usize) -> String {
    let mut e = format!("a{}", n.saturating_sub(1));
    for k in (0..n).rev() {
        let init = if k == 0 {
            "a".to_string()
        } else {
            format!("a{0} + a{0}", k - 1)
        };
        e = format!("cel.bind(a{k}, {init}, {e})");
    }
    format!("{e} != 0")
}

fn bind_ternary(n: usize) -> String {
    let mut e = format!("a{}", n.saturating_sub(1));
    for k in (0..n).rev() {
        let init = if k == 0 {
            "a".to_string()
        } else {
            format!("(a > 0 ? a{0} : a{0} + 1)", k - 1)
        };
        e = format!("cel.bind(a{k}, {init}, {e})");
    }
    format!("{e} != 0")
}

fn ternaries(n: usize) -> String {
    let mut e = "a".to_string();
    for i in 0..n {
        e = format!("(a == {i} ? {i} : {e})");
    }
    format!("{e} >= 0")
}

fn nested_all(n: usize) -> String {
    let mut e = "m.x > 0".to_string();
    for i in 0..n {
        e = format!("[{i}].all(x{i}, m.y != x{i} && {e})");
    }
    e
}

fn concat(n: usize) -> String {
    format!("({}).size() > 0", vec!["s"; n].join(" + "))
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "list literal",
        make: list,
        bindings: false,
    },
    Shape {
        name: "map literal",
        make: map,
        bindings: false,
    },
    Shape {
        name: "&& chain",
        make: and_chain,
        bindings: false,
    },
    Shape {
        name: "exists, or-chained",
        make: exists_chain,
        bindings: false,
    },
    Shape {
        name: "nested cel.bind",
        make: bind_chain,
        bindings: true,
    },
    Shape {
        name: "bind via ternary",
        make: bind_ternary,
        bindings: true,
    },
    Shape {
        name: "nested ternary",
        make: ternaries,
        bindings: false,
    },
    Shape {
        name: "string concat",
        make: concat,
        bindings: false,
    },
    Shape {
        name: "nested all, reads of m",
        make: nested_all,
        bindings: false,
    },
];

fn env(bindings: bool) -> Env {
    let builder = if bindings {
        Env::builder()
            .options(EnvOptions::default())
            .all_extension_libraries()
    } else {
        KubernetesEnv::newest().builder()
    };
    // Each timing compiles again: no cache of native programs.
    builder
        .native_cache(0)
        .variable("a", Type::Int)
        .variable("s", Type::String)
        .variable("m", Type::map(Type::String, Type::Dyn))
        .build()
}

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let kubernetes = env(false);
    let default = env(true);
    println!("| shape | n | code points | interpreter | jit | native |");
    println!("|---|---:|---:|---:|---:|---|");
    for shape in SHAPES {
        let env = if shape.bindings {
            &default
        } else {
            &kubernetes
        };
        let mut n = 1;
        loop {
            let expr = (shape.make)(n);
            let code_points = expr.chars().count();
            if code_points > MAX_CODE_POINTS {
                break;
            }
            let runs = if code_points > 20_000 { 3 } else { 7 };
            if let Err(issues) = env.compile(&expr) {
                let first = issues.to_string();
                let first = first.lines().next().unwrap_or_default();
                println!(
                    "| {} | {n} | {code_points} | rejected: {first} | | |",
                    shape.name
                );
                break;
            }
            let compile = |backend: Backend| {
                let ast = env.compile(&expr).expect("the expression compiled above");
                let options = ProgramOptions::default().backend(backend);
                env.program_with(&ast, options).expect("the program builds")
            };
            let native = compile(Backend::Jit).backend() == Backend::Jit;
            let interp = median(runs, || drop(compile(Backend::Interpreter)));
            let jit = median(runs, || drop(compile(Backend::Jit)));
            println!(
                "| {} | {n} | {code_points} | {:.2} ms | {:.2} ms | {} |",
                shape.name,
                interp.as_secs_f64() * 1e3,
                jit.as_secs_f64() * 1e3,
                if native { "yes" } else { "no" }
            );
            n *= 4;
        }
    }
}
