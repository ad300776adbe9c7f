//! Arbitrary bytes as the `cel` command's input documents (JSON, JSON lines or multi-document
//! YAML, with its size, nesting and alias bounds): reading them must not panic, and what is
//! read must be within the nesting bound.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the fuzz target uses the CLI's document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for doc in input::parse_documents(&text).into_iter().flatten() {
        // Whatever was accepted converts to a CEL value without running into the stack.
        let _ = celerity::value_from_json(&doc);
    }
});
