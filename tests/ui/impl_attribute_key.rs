use agent_core::tool;

struct Weather;

#[tool(read_only, timeout = "5s")]
impl Weather {
    /// Look up the weather.
    #[tool(crate = "agent_core")]
    fn lookup(&self, city: String) -> String {
        city
    }
}

fn main() {}
