use agent_core::tool;

/// Look up the weather.
#[tool(timeout = "thirty seconds")]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
