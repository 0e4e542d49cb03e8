//! Arbitrary bytes as a OpenAi reply body: a reply or a typed error, never a panic.
#![no_main]

use agent_core::providers::OpenAi;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = OpenAi::parse_response(data);
});
