use agent_core::tool;

struct Coordinates {
    lat: f64,
    lon: f64,
}

/// Look up the weather at a place.
#[tool]
fn get_weather(place: Coordinates) -> String {
    format!("{} {}", place.lat, place.lon)
}

fn main() {}
