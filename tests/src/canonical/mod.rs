//! The conformance suite's canonical replies and failures (`agent_core::testing::conformance`)
//! in each vendor's wire format: JSON bodies, error bodies and server-sent events, as a loopback
//! server answers the adapters with them (`tests/tests/conformance.rs`).

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod responses;

use agent_core::testing::conformance::ErrorKind;
use agent_core::{ChatResponse, FinishReason, ToolCall};
use serde_json::{Value, json};

pub use crate::responses_wire::pieces;

/// A call's arguments as a JSON object.
pub fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).expect("the suite's arguments are JSON")
}

/// One server-sent event carrying `data`, named `event` when it has a name.
pub fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}
