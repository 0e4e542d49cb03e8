use agent_core::tool;

/// Look up the weather.
#[tool(title = "Weather", timeout = "soon", read_only)]
fn get_weather<T>(city: &str, #[arg(fallback = 1)] days: u32, extra: T) -> String {
    let _ = (days, extra);
    city.to_owned()
}

fn main() {}
