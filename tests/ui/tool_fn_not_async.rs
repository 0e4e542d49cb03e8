use agent_core::tool_fn;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    id: u32,
}

fn main() {
    let _ = tool_fn("lookup", "Look up a number.", |args: Lookup| args.id.to_string());
}
