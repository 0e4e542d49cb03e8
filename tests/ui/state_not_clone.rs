use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, State, agent, tool};

struct Db;

/// Find a customer by id.
#[tool]
fn find_customer(State(_db): State<Db>, id: u32) -> String {
    id.to_string()
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent = agent!(model, find_customer).bind_context(Db);
    let _run = agent.run("Who is customer 7?");
}
