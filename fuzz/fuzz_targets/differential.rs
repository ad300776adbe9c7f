//! Differential fuzzing of the two backends on generated expressions: see
//! [`properties::backends_agree`].

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the targets use the document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;
#[allow(dead_code, reason = "each target checks one of the properties")]
#[path = "common/properties.rs"]
mod properties;

fuzz_target!(|data: &[u8]| properties::backends_agree(data));
