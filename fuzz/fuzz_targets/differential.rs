//! Differential fuzzing of the two backends: the input seeds `spec_tests::generate`'s
//! generator (the first 8 bytes, little-endian, zero-padded; the 9th byte, if any, picks the
//! maximum depth), which makes one random well-typed expression; the interpreter and native
//! code must agree on its value, error and cost, also under a cost limit when the generator
//! asks for one. Any disagreement, panic, or internal error panics with both outcomes.
//!
//! Expressions the checker rejects are generator bugs, not backend bugs; they are skipped
//! here and counted by `spec-tests/tests/generated.rs`.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use spec_tests::generate::{Differ, Generator, RunOptions, Verdict};

/// The environment and activation, built once per process.
fn differ() -> &'static Differ {
    static DIFFER: OnceLock<Differ> = OnceLock::new();
    DIFFER.get_or_init(|| Differ::new(false))
}

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 8];
    for (slot, byte) in seed.iter_mut().zip(data) {
        *slot = *byte;
    }
    let seed = u64::from_le_bytes(seed);
    let max_depth = data.get(8).map_or(5, |b| 1 + u32::from(b % 7));
    let options = RunOptions {
        max_depth,
        ..RunOptions::default()
    };
    let (expr, limit_seed) = Generator::new(seed).case(options);
    match differ().check(&expr, limit_seed) {
        Verdict::Rejected(_) => {}
        Verdict::Compared(c) => {
            assert!(
                c.disagreements.is_empty(),
                "seed {seed}, max depth {max_depth}: {}",
                c.disagreements
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            assert!(
                c.internal_errors.is_empty(),
                "seed {seed}, max depth {max_depth}: {}",
                c.internal_errors.join("\n")
            );
        }
    }
});
