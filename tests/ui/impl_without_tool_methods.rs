use agent_core::tool;

struct Weather;

#[tool]
impl Weather {
    /// Look up the weather (but not marked as a tool).
    fn lookup(&self, city: String) -> String {
        city
    }
}

fn main() {
    // The block still has its methods.
    let _ = Weather.lookup("Paris".to_owned());
}
