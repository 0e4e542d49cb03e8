//! Arbitrary bytes as an OpenAI Responses server-sent-event stream: events, then at most one `Finished` or
//! one error, which ends it; never a panic.
#![no_main]

use agent_core::providers::__fuzz;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    __fuzz::assert_ends_once(&__fuzz::openai_responses_stream(data));
});
