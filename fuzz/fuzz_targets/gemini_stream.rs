//! Arbitrary bytes as a Gemini server-sent-event stream: events, then at most one `Finished` or
//! one error, which ends it; never a panic.
#![no_main]

use agent_core::StreamEvent;
use agent_core::providers::__fuzz;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let events = __fuzz::gemini_stream(data);
    let last = events.len().saturating_sub(1);
    for (index, event) in events.iter().enumerate() {
        let ends = matches!(event, Err(_) | Ok(StreamEvent::Finished(_)));
        assert_eq!(
            ends,
            index == last,
            "only the last event ends the stream: {events:?}"
        );
    }
});
