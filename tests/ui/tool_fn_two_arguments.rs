use agent_core::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    id: u32,
}

fn main() {
    let _ = tool_fn("add", "Add two numbers.", |a: Lookup, b: Lookup| async move {
        (a.id + b.id).to_string()
    });
}
