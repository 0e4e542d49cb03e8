use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Decision};

fn main() {
    let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("hi")]));
    // A resumed run goes on with its paused run's conversation, not one given beside it.
    let _run = agent
        .resume_session([("c1", Decision::Approve)])
        .history(Vec::new());
}
