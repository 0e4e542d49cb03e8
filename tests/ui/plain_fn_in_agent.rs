use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, agent};

/// Add two numbers, but `#[tool]` was forgotten.
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("3")]);
    let _agent: Agent = agent!(model, add);
}
