use agent_core::tool;

struct Service;

impl Service {
    /// Look up the weather.
    #[tool]
    fn get_weather(&self, city: String) -> String {
        city
    }
}

fn main() {}
