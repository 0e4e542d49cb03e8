use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Decision};

fn main() {
    let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("hi")]));
    // The paused run is the session's: the run needs `.session(&store, id)` to find it.
    let _run = async move { agent.resume_session([("c1", Decision::Approve)]).await };
}
