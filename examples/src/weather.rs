//! The example tools: a weather lookup and a clock, with sample data. The `weather` example gives
//! them to an agent, the `mcp_server` binary serves them over MCP.

use std::fmt;

use agent_core::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A temperature unit.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Degrees Celsius
    Celsius,
    /// Degrees Fahrenheit
    Fahrenheit,
}

/// Today's weather in a city. It has a schema, so MCP clients get it as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    /// The city asked about
    pub city: String,
    /// Rain, sun, clouds
    pub weather: &'static str,
    /// Temperature in `unit`
    pub temp: i32,
    /// `°C` or `°F`
    pub unit: &'static str,
}

/// Why there is no weather for a city.
#[derive(Debug)]
pub enum WeatherError {
    /// The sample data has no such city.
    UnknownCity(String),
}

impl fmt::Display for WeatherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeatherError::UnknownCity(city) => {
                write!(f, "no weather data for `{city}`; try a larger city nearby")
            }
        }
    }
}

/// Look up today's weather for a city. Use it when the user asks about the weather,
/// what to wear, or whether to take an umbrella.
#[tool(read_only, idempotent)]
pub async fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
    /// Unit for temperatures; Celsius when left out
    unit: Option<Unit>,
) -> Result<Weather, WeatherError> {
    // Sample data; a real tool would call a weather service here.
    let (weather, celsius) = match city.as_str() {
        "Beijing" | "北京" => ("light rain", 18),
        "Shanghai" | "上海" => ("cloudy", 22),
        _ => return Err(WeatherError::UnknownCity(city)),
    };
    let (temp, unit) = match unit.unwrap_or(Unit::Celsius) {
        Unit::Celsius => (celsius, "°C"),
        Unit::Fahrenheit => (celsius * 9 / 5 + 32, "°F"),
    };
    Ok(Weather {
        city,
        weather,
        temp,
        unit,
    })
}

/// Tell the local time in a city.
#[tool(read_only)]
pub fn get_time(
    /// City name
    city: String,
) -> String {
    format!("It is 08:30 in {city}.")
}
