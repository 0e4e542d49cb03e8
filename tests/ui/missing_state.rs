use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, State, agent, tool};

#[derive(Clone)]
struct Db;

/// Find a customer by id.
#[tool]
fn find_customer(State(_db): State<Db>, id: u32) -> String {
    id.to_string()
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent = agent!(model, find_customer);
    let _run = async move { agent.run("Who is customer 7?").await };
}
