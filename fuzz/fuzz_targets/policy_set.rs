//! Admission policy sets whose variables reach each other, on both backends, with a bound
//! on wall time: see [`properties::policy_sets_answer`].

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the targets use the document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;
#[allow(dead_code, reason = "each target checks one of the properties")]
#[path = "common/properties.rs"]
mod properties;

fuzz_target!(|data: &[u8]| properties::policy_sets_answer(data));
