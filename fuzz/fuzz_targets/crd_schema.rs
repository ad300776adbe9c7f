//! Arbitrary bytes as a CustomResourceDefinition (JSON, or YAML as the `cel` command reads
//! it): compiling it (schema parsing, structural checks, rule compilation and cost checks)
//! must not panic, and neither must validating a few fixed objects against what compiled.

#![no_main]

use celerity::kubernetes::crd::{CompiledCrd, CrdOptions};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

#[allow(dead_code, reason = "the fuzz target uses the CLI's document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let options = CrdOptions::default();
    for doc in input::parse_documents(&text).into_iter().flatten() {
        let Ok(crd) = CompiledCrd::new(&doc, &options) else {
            continue;
        };
        let objects = [
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}}),
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
                   "spec": {"a": 1, "b": "s", "c": [1, 2], "d": {"e": true}}}),
        ];
        for object in &objects {
            let _ = crd.validate(object, None);
            let _ = crd.validate(object, Some(object));
        }
    }
});
