use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, tool};

#[derive(Clone)]
struct Db;

struct Customers;

#[tool]
impl Customers {
    /// Find a customer.
    #[tool]
    async fn find(&self, State(_db): State<Db>, id: u32) -> u32 {
        id
    }
}

async fn run() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent = Agent::new(model).try_toolbox(Customers).unwrap();
    let _ = agent.run("go").await;
}

fn main() {
    let _ = run();
}
