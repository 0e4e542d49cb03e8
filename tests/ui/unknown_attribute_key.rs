use agent_core::tool;

/// Look up the weather.
#[tool(title = "Weather")]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
