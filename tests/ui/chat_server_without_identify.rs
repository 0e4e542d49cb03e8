use std::sync::Arc;

use agent_core::testing::ScriptedModel;
use agent_web::ChatServer;
use agent_core::{Agent, AssistantMessage};

/// The signed-in user each run is for.
#[derive(Clone)]
struct User(String);

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent: Agent<User> = Agent::new(model);
    // A server for an agent that needs a context must be told how a request names its user.
    let _router = ChatServer::new(Arc::new(agent)).router();
}
