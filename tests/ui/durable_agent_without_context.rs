use std::sync::Arc;

use agent_restate::DurableAgent;
use agent_restate::restate_sdk::prelude::Endpoint;
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, agent, tool};

#[derive(Clone)]
struct User(String);

/// Who is asking.
#[tool]
fn whoami(State(user): State<User>) -> String {
    user.0
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent: Agent<User> = agent!(model, whoami);
    // Each run needs a `User`: the durable agent must be told how to make one with `.context(..)`.
    let _endpoint = Endpoint::builder()
        .bind(DurableAgent::new("Assistant", Arc::new(agent)))
        .build();
}
