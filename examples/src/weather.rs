//! The example tools: a weather lookup and a clock, with sample data. The `weather` example gives
//! them to an agent, the `mcp_server` binary serves them over MCP.

use std::fmt;

use agent_core::{Part, tool};
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

/// The rain radar picture the sample data has: a 4x4 PNG, all rain-blue.
pub const RADAR_PNG: [u8; 73] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x08, 0x02, 0x00, 0x00, 0x00, 0x26, 0x93, 0x09,
    0x29, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x90, 0x8b, 0x3a, 0x01,
    0x47, 0x0c, 0xc4, 0x71, 0x00, 0xfd, 0xa3, 0x14, 0x01, 0x32, 0x3d, 0x21, 0x21, 0x00, 0x00, 0x00,
    0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// Show the rain radar picture for a city: a caption and the image, which a model that sees
/// images can read and an MCP client gets as image content.
#[tool(read_only)]
pub fn rain_radar(
    /// City name
    city: String,
) -> Vec<Part> {
    vec![
        Part::text(format!("Rain radar for {city}, last hour:")),
        Part::image("image/png", RADAR_PNG),
    ]
}
