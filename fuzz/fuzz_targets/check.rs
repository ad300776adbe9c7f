//! Arbitrary bytes (as lossy UTF-8) as an expression in the newest Kubernetes environment:
//! see [`properties::check_and_evaluate`].

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the targets use the document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;
#[allow(dead_code, reason = "each target checks one of the properties")]
#[path = "common/properties.rs"]
mod properties;

fuzz_target!(|data: &[u8]| properties::check_and_evaluate(data));
