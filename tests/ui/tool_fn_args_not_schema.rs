use agent_core::tool_fn;
use serde::Deserialize;

#[derive(Deserialize)]
struct Lookup {
    id: u32,
}

fn main() {
    let _ = tool_fn("lookup", "Look up a number.", |args: Lookup| async move {
        args.id.to_string()
    });
}
