use agent_core::tool;

/// Look up the weather.
#[tool]
fn get_weather(#[arg(fallback = "Beijing")] city: String) -> String {
    city
}

fn main() {}
