//! The cases of `cases.json` in the newest Kubernetes environment: ns per evaluation on the
//! interpreter and the JIT (cost tracking on, as Kubernetes runs; and the JIT with tracking
//! off, for its overhead), the same with `self` typed by a schema where the case reads only
//! `self` (`*_typed`: as a CRD rule sees its object), and the time to
//! make each program: parse, check and plan (`compile_interp`), and the same plus native
//! code, optimised (`compile`) or with `fast_compile` (`compile_fast`), or found in the
//! environment's cache of native programs (`compile_again`); and hand-written Rust for three
//! cases (`hand_written`), the limits the targets are measured against.
//!
//! `cargo bench -p benches`, then `cargo run --release -p benches --bin bench-table` for the
//! README's table.

use std::hint::black_box;
use std::time::Duration;

use celerity::{Backend, MapActivation, Program, ProgramOptions, Value};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};

fn evaluation(c: &mut Criterion) {
    for case in benches::cases() {
        let env = benches::env(&case);
        let act = benches::activation(&case);
        let mut group = c.benchmark_group(format!("eval/{}", case.name));
        for (label, backend, track) in [
            ("interpreter", Backend::Interpreter, true),
            ("jit", Backend::Jit, true),
            ("jit_untracked", Backend::Jit, false),
        ] {
            let program = benches::program(&env, &case, backend, track);
            group.bench_function(label, |b| {
                b.iter(|| black_box(program.eval(black_box(&act))))
            });
        }
        // The result written into a slot kept across evaluations (`Program::eval_into`).
        let program = benches::program(&env, &case, Backend::Jit, true);
        let mut slot = Value::Null;
        group.bench_function("jit_into", |b| {
            b.iter(|| consume_into(&program, &act, &mut slot))
        });
        // `self` typed by a schema, as a CRD rule sees it (converted once, not timed here).
        if let Some(typed) = benches::typed(&case) {
            for (label, backend) in [
                ("interpreter_typed", Backend::Interpreter),
                ("jit_typed", Backend::Jit),
            ] {
                let program = benches::program(&typed.env, &case, backend, true);
                let act = &typed.activation;
                group.bench_function(label, |b| {
                    b.iter(|| black_box(program.eval(black_box(act))))
                });
            }
            // Into a slot, as the hand-written typed limit writes its result.
            let program = benches::program(&typed.env, &case, Backend::Jit, true);
            let act = &typed.activation;
            group.bench_function("jit_typed_into", |b| {
                b.iter(|| consume_into(&program, act, &mut slot))
            });
        }
        group.finish();
    }
}

/// One evaluation into `slot`, consumed as a caller would: the outcome tested, the cost and
/// the slot read.
#[inline(always)]
fn consume_into(program: &Program, act: &MapActivation, slot: &mut Value) {
    let (outcome, details) = program.eval_into(black_box(act), slot);
    black_box(outcome.is_ok());
    black_box(details.actual_cost);
    black_box(&*slot);
}

fn compilation(c: &mut Criterion) {
    let groups = [
        ("compile_interp", Backend::Interpreter, false),
        ("compile", Backend::Jit, false),
        ("compile_fast", Backend::Jit, true),
    ];
    for (group_name, backend, fast_compile) in groups {
        let mut group = c.benchmark_group(group_name);
        for case in benches::cases() {
            // Each iteration compiles: no cache of native programs.
            let env = benches::builder(&case).native_cache(0).build();
            let options = ProgramOptions::default()
                .backend(backend)
                .fast_compile(fast_compile);
            group.bench_function(case.name.as_str(), |b| {
                b.iter(|| black_box(benches::program_with(&env, &case, options)))
            });
        }
        group.finish();
    }
    // A program made again from an expression the environment compiled before (a host that
    // makes programs per request, or rebuilds them on a configuration change): parse, check
    // and plan, and the native code found in the environment's cache.
    let mut group = c.benchmark_group("compile_again");
    for case in benches::cases() {
        let env = benches::env(&case);
        let options = ProgramOptions::default().backend(Backend::Jit);
        let first = benches::program_with(&env, &case, options);
        group.bench_function(case.name.as_str(), |b| {
            b.iter(|| {
                let again = benches::program_with(&env, &case, options);
                assert!(again.shares_native_code(&first));
                black_box(again)
            })
        });
    }
    group.finish();
}

/// What a hand-written Rust function takes for three cases, on this machine: the limits the
/// targets of issue 13 are stated against (the floor, typed field reads, concatenation
/// compared piece by piece). Each is called through a function pointer, as generated code
/// is, and writes its result into a slot, as `Program::eval_into` does.
fn hand_written(c: &mut Criterion) {
    /// `self` of `replicas_range` as a struct with a field for each property.
    struct Replicas {
        min_replicas: i64,
        replicas: i64,
        max_replicas: i64,
    }
    fn replicas_in_range(s: &Replicas) -> bool {
        s.min_replicas <= s.replicas && s.replicas <= s.max_replicas
    }
    fn replicas_in_range_tree(s: &Value) -> bool {
        let Value::Map(m) = s else { return false };
        let field = |name| match m.get_str(name) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        };
        match (
            field("minReplicas"),
            field("replicas"),
            field("maxReplicas"),
        ) {
            (Some(min), Some(r), Some(max)) => min <= r && r <= max,
            _ => false,
        }
    }
    fn hello_world(name: &str) -> bool {
        let (want, head, tail) = ("hello world!", "hello ", "!");
        want.len() == head.len() + name.len() + tail.len()
            && want.starts_with(head)
            && want[head.len()..].starts_with(name)
            && want.ends_with(tail)
    }
    let case = |name: &str| {
        benches::cases()
            .into_iter()
            .find(|c| c.name == name)
            .expect("a case of cases.json")
    };
    let replicas = case("replicas_range");
    let tree = celerity::value_from_json(&replicas.vars["self"]).expect("JSON converts");
    let int = |field: &str| replicas.vars["self"][field].as_i64().expect("an integer");
    let typed = Replicas {
        min_replicas: int("minReplicas"),
        replicas: int("replicas"),
        max_replicas: int("maxReplicas"),
    };
    let concat = case("string_concat_eq");
    let name = concat.vars["name"].as_str().expect("a string").to_string();

    // Every case is true, as in `cases.json` (checked here, whichever benchmarks a filter
    // runs).
    assert!(
        replicas_in_range(&typed) && replicas_in_range_tree(&tree) && hello_world(&name),
        "a hand-written case is false"
    );
    let mut group = c.benchmark_group("hand_written");
    let yes: fn() -> bool = || true;
    time_into_slot(&mut group, "baseline_true", || black_box(yes)());
    let f: fn(&Replicas) -> bool = replicas_in_range;
    time_into_slot(&mut group, "replicas_range_struct", || {
        black_box(f)(black_box(&typed))
    });
    let f: fn(&Value) -> bool = replicas_in_range_tree;
    time_into_slot(&mut group, "replicas_range_value_tree", || {
        black_box(f)(black_box(&tree))
    });
    let f: fn(&str) -> bool = hello_world;
    time_into_slot(&mut group, "string_concat_eq", || {
        black_box(f)(black_box(&name))
    });
    group.finish();
}

/// Times `call`, its result written into a slot kept across iterations. `call` is a
/// closure, so it is inlined into the timed loop: the function pointer it calls is the one
/// indirect call.
fn time_into_slot(group: &mut BenchmarkGroup<'_, WallTime>, label: &str, call: impl Fn() -> bool) {
    group.bench_function(label, |b| {
        let mut slot = Value::Null;
        b.iter(|| {
            slot = Value::Bool(call());
            black_box(&slot);
        })
    });
}

criterion_group! {
    name = engines;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
    targets = evaluation, compilation, hand_written
}
criterion_main!(engines);
