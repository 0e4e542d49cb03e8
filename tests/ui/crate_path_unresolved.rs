use agent_core::tool;

/// Echo the text.
#[tool(crate = "not_agent_core")]
fn echo(text: String) -> String {
    text
}

fn main() {}
