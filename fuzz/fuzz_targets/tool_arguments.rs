//! Arbitrary argument text through the dispatcher of a tool with nested types: it must always
//! return a result (an error result for anything that does not fit), never panic.
#![no_main]

use std::collections::HashMap;

use agent_core::{ToolCall, ToolSet, tool};
use futures_util::FutureExt;
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    High,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Step {
    Walk { metres: u32 },
    Ride { line: String, stops: Vec<u8> },
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Leg {
    from: String,
    to: String,
    steps: Vec<Step>,
    extra: Option<HashMap<String, f64>>,
}

/// Plan a route through nested legs.
#[tool]
fn plan(
    legs: Vec<Leg>,
    priority: Option<Priority>,
    #[arg(default = 3)] alternatives: u8,
    tags: HashMap<String, Vec<i64>>,
) -> String {
    let mut described = Vec::new();
    for leg in &legs {
        for step in &leg.steps {
            described.push(match step {
                Step::Walk { metres } => format!("walk {metres} m"),
                Step::Ride { line, stops } => format!("ride {line} for {} stops", stops.len()),
            });
        }
        let extra = leg.extra.as_ref().map_or(0, HashMap::len);
        described.push(format!("{} -> {} ({extra} extras)", leg.from, leg.to));
    }
    format!(
        "{described:?}, {priority:?}, {alternatives} alternatives, {} tags",
        tags.len()
    )
}

fuzz_target!(|data: &[u8]| {
    let mut tools = ToolSet::new();
    tools.add(plan {}).expect("one tool");
    let call = ToolCall::new("fuzz", "plan", String::from_utf8_lossy(data));
    // The tool is synchronous, so the dispatch completes on its first poll.
    let result = tools
        .dispatch(&(), &call)
        .now_or_never()
        .expect("completes at once");
    assert_eq!(result.tool_call_id, "fuzz");
    assert!(result.content.chars().count() <= 8000 + 100);
});
