use agent_core::tool;

/// Echo a value.
#[tool]
fn echo(value: impl Into<String>) -> String {
    value.into()
}

fn main() {}
