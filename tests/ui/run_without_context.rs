use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, agent, tool};

#[derive(Clone)]
struct UserId(u64);

/// Who is asking.
#[tool]
fn whoami(State(user): State<UserId>) -> String {
    format!("user {}", user.0)
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent: Agent<UserId> = agent!(model, whoami);
    // The tools need a `UserId`: the run must be given one with `.context(&user)`.
    let _run = async move { agent.run("Who am I?").await };
}
