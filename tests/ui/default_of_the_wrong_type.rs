use agent_core::tool;

/// Forecast the weather.
#[tool]
fn forecast(
    /// How many days ahead
    #[arg(default = "three")]
    days: u32,
    /// Whether to include the night
    #[arg(default)]
    nights: NoDefault,
) -> String {
    format!("{days} {}", nights.0)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoDefault(bool);

fn main() {}
