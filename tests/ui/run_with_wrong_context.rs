use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, agent, tool};

#[derive(Clone)]
struct UserId(u64);

/// Says who is asking.
#[tool]
fn whoami(State(user): State<UserId>) -> String {
    user.0.to_string()
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent: Agent<UserId> = agent!(model, whoami);
    let _run = agent.run("Who am I?").context(&"user 7");
}
