use agent_core::tool;

/// Look up the weather.
#[tool(inline)]
async fn get_weather(city: String) -> String {
    city
}

fn main() {}
