use agent_core::{ToolSet, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    id: u32,
}

fn main() {
    let mut tools: ToolSet = ToolSet::new();
    let lookup = tool_fn("lookup", "Look up a number.", |args: Lookup| async move { args.id });
    let _ = tools.add(lookup);
}
