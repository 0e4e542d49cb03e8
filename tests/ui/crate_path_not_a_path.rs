use agent_core::tool;

/// Echo the text.
#[tool(crate = my-framework, timeout = "soon")]
fn echo(text: String) -> String {
    text
}

fn main() {}
