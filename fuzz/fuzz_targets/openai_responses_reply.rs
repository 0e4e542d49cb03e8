//! Arbitrary bytes as an OpenAI Responses reply body: a reply or a typed error, never a panic.
#![no_main]

use agent_core::providers::__fuzz;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = __fuzz::openai_responses_reply(data);
});
