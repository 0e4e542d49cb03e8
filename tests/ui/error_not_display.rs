use agent_core::tool;

#[derive(Debug)]
struct LookupFailed;

/// Look up the weather.
#[tool]
fn get_weather(city: String) -> Result<String, LookupFailed> {
    if city.is_empty() {
        return Err(LookupFailed);
    }
    Ok(city)
}

fn main() {}
