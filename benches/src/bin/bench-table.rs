//! Prints the README's benchmark table from criterion's results (`target/criterion`, written
//! by `cargo bench -p benches`): median ns per evaluation on the interpreter, on the JIT with
//! and without cost tracking and with the value written into a slot (`Program::eval_into`),
//! both with `self` typed by a schema (returned and into a slot), the speed-up, and the
//! median compile time; then the hand-written Rust of three cases beside Celerity's native
//! code for them.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

/// The median of a benchmark in ns, from criterion's `estimates.json`.
fn median(dir: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join("new/estimates.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn fmt_ns(ns: Option<f64>) -> String {
    match ns {
        None => "–".into(),
        Some(n) if n >= 10_000.0 => format!("{:.1} µs", n / 1000.0),
        Some(n) if n >= 1_000.0 => format!("{:.2} µs", n / 1000.0),
        Some(n) if n >= 100.0 => format!("{n:.0} ns"),
        Some(n) => format!("{n:.1} ns"),
    }
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion"));
    println!(
        "| case | interpreter | JIT | JIT, into a slot | JIT, no cost tracking | JIT speed-up | tracking overhead | typed: interpreter | typed: JIT | typed: JIT, into a slot | compile: front end | + native | + native, fast | again, cached |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for case in benches::cases() {
        let eval = root.join(format!("eval_{}", case.name));
        let interp = median(&eval.join("interpreter"));
        let jit = median(&eval.join("jit"));
        let into = median(&eval.join("jit_into"));
        let untracked = median(&eval.join("jit_untracked"));
        let interp_typed = median(&eval.join("interpreter_typed"));
        let jit_typed = median(&eval.join("jit_typed"));
        let typed_into = median(&eval.join("jit_typed_into"));
        let front = median(&root.join("compile_interp").join(&case.name));
        let compile = median(&root.join("compile").join(&case.name));
        let fast = median(&root.join("compile_fast").join(&case.name));
        let again = median(&root.join("compile_again").join(&case.name));
        let ratio = match (interp, jit) {
            (Some(i), Some(j)) if j > 0.0 => format!("{:.1}×", i / j),
            _ => "–".into(),
        };
        let overhead = match (jit, untracked) {
            (Some(j), Some(u)) if u > 0.0 => format!("{:+.0}%", (j / u - 1.0) * 100.0),
            _ => "–".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            case.name,
            fmt_ns(interp),
            fmt_ns(jit),
            fmt_ns(into),
            fmt_ns(untracked),
            ratio,
            overhead,
            fmt_ns(interp_typed),
            fmt_ns(jit_typed),
            fmt_ns(typed_into),
            fmt_ns(front),
            fmt_ns(compile),
            fmt_ns(fast),
            fmt_ns(again),
        );
    }
    println!();
    hand_written_table(&root);
}

/// Hand-written Rust (`hand_written/*`) beside the native code of the same case, and how
/// many times slower native code is.
fn hand_written_table(root: &Path) {
    let rows = [
        (
            "baseline_true",
            "baseline_true",
            "jit_into",
            "JIT, into a slot",
        ),
        (
            "replicas_range_struct",
            "replicas_range",
            "jit_typed_into",
            "typed: JIT, into a slot (a struct by hand)",
        ),
        (
            "replicas_range_value_tree",
            "replicas_range",
            "jit_into",
            "JIT, into a slot (a map by hand)",
        ),
        (
            "string_concat_eq",
            "string_concat_eq",
            "jit_into",
            "JIT, into a slot",
        ),
    ];
    println!("| case | Celerity | hand-written Rust | Celerity against hand-written |");
    println!("|---|---:|---:|---:|");
    for (hand, case, column, label) in rows {
        let by_hand = median(&root.join("hand_written").join(hand));
        let native = median(&root.join(format!("eval_{case}")).join(column));
        let ratio = match (native, by_hand) {
            (Some(n), Some(h)) if h > 0.0 => format!("{:.1}×", n / h),
            _ => "–".into(),
        };
        println!(
            "| {case}, {label} | {} | {} | {ratio} |",
            fmt_ns(native),
            fmt_ns(by_hand)
        );
    }
}
