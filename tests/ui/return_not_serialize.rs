use agent_core::tool;

struct Weather {
    temp: i32,
}

/// Look up the weather.
#[tool]
fn get_weather(city: String) -> Weather {
    Weather { temp: city.len() as i32 }
}

fn main() {}
