use agent_core::tool;

mod web {
    /// A web framework's state extractor, named like agent-core's.
    pub struct State<T>(pub T);
}

use web::State;

#[derive(Clone)]
struct Db;

/// Find a customer by id.
#[tool]
fn find_customer(State(_db): State<Db>, id: u32) -> String {
    id.to_string()
}

fn main() {}
