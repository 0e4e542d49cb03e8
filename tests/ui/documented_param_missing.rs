use agent_core::tool;

/// Look up the weather.
///
/// # Arguments
///
/// * `city` - City name
/// * `country` - Country code
#[tool]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
