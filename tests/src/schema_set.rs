//! The tools whose schemas are snapshot-tested: one for each kind of parameter `#[tool]` supports.
//! `tests/schema.rs` snapshots their neutral schemas, `tests/dialects.rs` each provider's dialect.

use std::collections::HashMap;

use agent_core::{Tool, ToolDef, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Takes one of each primitive.
#[tool]
pub fn primitives(text: String, count: i64, ratio: f64, flag: bool, small: u8) -> String {
    format!("{text}{count}{ratio}{flag}{small}")
}

/// A temperature unit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Degrees Celsius, used almost everywhere.
    Celsius,
    /// Degrees Fahrenheit, used in the United States.
    Fahrenheit,
}

/// Weather with optional parts.
#[tool]
pub fn optional(
    /// City name
    city: String,
    /// Unit for temperatures; Celsius when left out
    unit: Option<Unit>,
    note: Option<String>,
) -> String {
    format!("{city}{unit:?}{note:?}")
}

/// A forecast with defaults.
#[tool]
pub fn defaulted(
    /// How many days ahead
    #[arg(default = 3)]
    days: u32,
    /// Whether to explain
    #[arg(default)]
    verbose: bool,
    /// Language of the answer
    #[arg(default = "en".to_owned())]
    language: String,
) -> String {
    format!("{days}{verbose}{language}")
}

/// A shape to draw.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A circle around the origin.
    Circle {
        /// Radius in metres
        radius: f64,
    },
    /// An axis-aligned rectangle.
    Rectangle {
        /// Width in metres
        width: f64,
        /// Height in metres
        height: f64,
    },
}

/// Draw a shape.
#[tool]
pub fn draw(shape: Shape, unit: Unit) -> String {
    let area = match shape {
        Shape::Circle { radius } => std::f64::consts::PI * radius * radius,
        Shape::Rectangle { width, height } => width * height,
    };
    format!("{area}{unit:?}")
}

/// A place on Earth.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Location {
    /// City name
    pub city: String,
    /// ISO country code, when the city name is ambiguous
    pub country: Option<String>,
}

/// Plan a trip.
#[tool]
pub fn plan_trip(
    /// Where the trip starts
    from: Location,
    /// Stops on the way, in order
    stops: Vec<Location>,
    /// Tags for the trip
    tags: Vec<String>,
) -> String {
    let places: Vec<String> = std::iter::once(from)
        .chain(stops)
        .map(|stop| format!("{}{}", stop.city, stop.country.unwrap_or_default()))
        .collect();
    format!("{places:?}{tags:?}")
}

/// Set several counters at once.
#[tool]
pub fn set_counters(
    /// Counter name to value
    counters: HashMap<String, i32>,
) -> usize {
    counters.len()
}

/// Tell the current time.
#[tool]
pub fn now() -> &'static str {
    "12:00"
}

/// 查询指定城市今天的天气。
/// 用户问天气、穿衣、是否带伞时使用。
#[tool]
pub fn get_weather(
    /// 城市名，如：北京
    city: String,
) -> String {
    city
}

/// Look up the weather.
///
/// Use it when the user asks about the weather, what to wear, or whether to take an
/// umbrella; see [`Unit`] for units.
///
/// # Arguments
///
/// * `city` - City name, e.g. "Beijing"
/// * `unit` - Temperature unit
///
/// # Errors
///
/// When the city is unknown.
#[tool(name = "weather-lookup")]
pub fn rustdoc_arguments(city: String, unit: Option<Unit>) -> String {
    format!("{city}{unit:?}")
}

/// Ignored: the attribute wins.
#[tool(description = "Says hello.")]
pub fn hello() -> String {
    "hello".to_owned()
}

/// What `report` returns: an object, so it is the tool's output schema.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Report {
    /// Degrees in the unit asked for
    pub temperature: f64,
    /// The unit of `temperature`
    pub unit: Unit,
    pub warnings: Vec<String>,
}

/// Reports the weather as structured data.
#[tool]
pub async fn report(unit: Unit) -> Result<Report, std::io::Error> {
    Ok(Report {
        temperature: 18.5,
        unit,
        warnings: Vec::new(),
    })
}

/// What `ping` returns: serializable, but without a schema.
#[derive(Debug, Serialize)]
pub struct Pong {
    pub at: u64,
}

/// Answers a ping.
#[tool]
pub fn ping() -> Pong {
    Pong { at: 0 }
}

/// Lists numbers: JSON, but not an object, so no output schema.
#[tool]
pub fn numbers() -> Vec<u32> {
    vec![1, 2]
}

/// Every tool of the set with its snapshot name, in a stable order.
pub fn all() -> Vec<(&'static str, ToolDef)> {
    fn def(tool: impl Tool) -> ToolDef {
        tool.definition().clone()
    }
    vec![
        ("primitives", def(primitives {})),
        ("option", def(optional {})),
        ("defaulted", def(defaulted {})),
        ("enum_with_docs", def(draw {})),
        ("nested_struct_and_vec", def(plan_trip {})),
        ("map", def(set_counters {})),
        ("no_parameters", def(now {})),
        ("chinese_description", def(get_weather {})),
        ("rustdoc_arguments", def(rustdoc_arguments {})),
    ]
}
