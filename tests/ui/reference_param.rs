use agent_core::tool;

/// Look up the weather.
#[tool]
fn get_weather(city: &str) -> String {
    city.to_owned()
}

fn main() {}
