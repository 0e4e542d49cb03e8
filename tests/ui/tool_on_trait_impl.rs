use agent_core::tool;

struct Weather;

trait Lookup {
    fn lookup(&self, city: String) -> String;
}

#[tool]
impl Lookup for Weather {
    /// Look up the weather.
    #[tool]
    fn lookup(&self, city: String) -> String {
        city
    }
}

fn main() {}
