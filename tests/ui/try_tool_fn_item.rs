use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, tool};

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("3")]);
    let _agent: Result<Agent, _> = Agent::new(model).try_tool(add);
}
