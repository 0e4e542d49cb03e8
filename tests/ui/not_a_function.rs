use agent_core::tool;

/// A struct is not a tool.
#[tool]
struct Weather {
    city: String,
}

fn main() {}
