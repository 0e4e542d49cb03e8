use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Decision, Part, PausedRun};

fn main() {
    let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("hi")]));
    let paused = PausedRun::from_json("{}").unwrap();
    // A resumed run adds no message: its paused run holds the conversation.
    let _run = agent
        .resume(paused, [("c1", Decision::Approve)])
        .parts([Part::text("and this")]);
}
