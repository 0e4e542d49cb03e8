use agent_core::tool;

#[derive(Default)]
struct Coordinates {
    lat: f64,
    lon: f64,
}

/// Look up the weather at a place.
#[tool]
fn get_weather(
    /// Where; here when left out
    #[arg(default)]
    place: Coordinates,
) -> String {
    format!("{} {}", place.lat, place.lon)
}

fn main() {}
