//! Replays the fuzz targets' committed inputs on stable Rust: the minimised corpus of each
//! target (`fuzz/corpus/<target>/`) and every input that once crashed it
//! (`fuzz/regressions/<target>/`), through the same property the target checks
//! (`fuzz/fuzz_targets/common/properties.rs`). The `resources` target's time and memory
//! bounds are not timed here (timing in tests is noise); its inputs are compiled and run on
//! both backends.

use std::path::{Path, PathBuf};

#[allow(dead_code, reason = "the properties use the document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;
#[allow(dead_code, reason = "the resources target's helpers are used in part")]
#[path = "../../fuzz/fuzz_targets/common/properties.rs"]
mod properties;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The committed inputs of `target`, corpus and regressions, sorted.
fn inputs(target: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for kind in ["corpus", "regressions"] {
        let dir = fuzz_dir().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        files.extend(entries.map(|e| e.expect("a readable directory").path()));
    }
    files.sort();
    files
}

/// Runs `property` on every committed input of `target`; there must be some.
fn replay(target: &str, property: impl Fn(&[u8])) {
    let files = inputs(target);
    assert!(
        !files.is_empty(),
        "no committed inputs for the fuzz target {target}"
    );
    for file in &files {
        let data = std::fs::read(file).expect("a readable input");
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| property(&data)));
        if let Err(panic) = outcome {
            eprintln!("{target}: {} fails", file.display());
            std::panic::resume_unwind(panic);
        }
    }
}

#[test]
fn parse_inputs() {
    replay("parse", properties::parse_round_trip);
}

#[test]
fn check_inputs() {
    replay("check", properties::check_and_evaluate);
}

#[test]
fn differential_inputs() {
    replay("differential", properties::backends_agree);
}

#[test]
fn crd_schema_inputs() {
    replay("crd_schema", properties::crd_compiles_and_validates);
}

#[test]
fn yaml_input_inputs() {
    replay("yaml_input", properties::documents_convert);
}

#[test]
fn resources_inputs() {
    replay("resources", |data| {
        let text = String::from_utf8_lossy(data);
        if let Some(native) = properties::compile_native(&text) {
            let interpreted = properties::compile_interpreted(&text)
                .expect("the same program on the interpreter");
            properties::evaluate(&interpreted, &text, "interpreter");
            properties::evaluate(&native, &text, "native code");
        }
    });
}

#[test]
fn policy_set_inputs() {
    replay("policy_set", properties::policy_sets_answer);
}
