use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage};

#[derive(serde::Deserialize)]
struct Ticket {
    title: String,
}

fn main() {
    let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("{}")]));
    let _run = agent.run("File it").output::<Ticket>();
}
