use agent_core::tool;

struct Weather;

impl Weather {
    /// Look up the weather.
    #[tool]
    fn lookup(city: String) -> String {
        city
    }
}

fn main() {}
