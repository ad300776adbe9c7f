//! Arbitrary bytes (as lossy UTF-8) parsed: see [`properties::parse_round_trip`].

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the targets use the document reader only")]
#[path = "../../tools/cel-cli/src/input.rs"]
mod input;
#[allow(dead_code, reason = "each target checks one of the properties")]
#[path = "common/properties.rs"]
mod properties;

fuzz_target!(|data: &[u8]| properties::parse_round_trip(data));
