//! Arbitrary bytes as a Gemini reply body: a reply or a typed error, never a panic.
#![no_main]

use agent_core::providers::Gemini;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Gemini::parse_response(data);
});
