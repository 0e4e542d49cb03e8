//! The exact schema and description `#[tool]` generates, as snapshots.

use std::collections::HashMap;

use agent_core::{Tool, ToolDef, tool};
use schemars::JsonSchema;
use serde::Deserialize;

fn definition(tool: &impl Tool) -> &ToolDef {
    tool.definition()
}

/// Takes one of each primitive.
#[tool]
fn primitives(text: String, count: i64, ratio: f64, flag: bool, small: u8) -> String {
    format!("{text}{count}{ratio}{flag}{small}")
}

#[test]
fn primitives_schema() {
    insta::assert_json_snapshot!(definition(&primitives {}));
}

/// A temperature unit.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius, used almost everywhere.
    Celsius,
    /// Degrees Fahrenheit, used in the United States.
    Fahrenheit,
}

/// Weather with optional parts.
#[tool]
fn optional(
    /// City name
    city: String,
    /// Unit for temperatures; Celsius when left out
    unit: Option<Unit>,
    note: Option<String>,
) -> String {
    format!("{city}{unit:?}{note:?}")
}

#[test]
fn option_schema() {
    insta::assert_json_snapshot!(definition(&optional {}));
}

/// A forecast with defaults.
#[tool]
fn defaulted(
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

#[test]
fn defaulted_schema() {
    insta::assert_json_snapshot!(definition(&defaulted {}));
}

/// A shape to draw.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
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
fn draw(shape: Shape, unit: Unit) -> String {
    let area = match shape {
        Shape::Circle { radius } => std::f64::consts::PI * radius * radius,
        Shape::Rectangle { width, height } => width * height,
    };
    format!("{area}{unit:?}")
}

#[test]
fn enum_with_docs_schema() {
    insta::assert_json_snapshot!(definition(&draw {}));
}

/// A place on Earth.
#[derive(Debug, Deserialize, JsonSchema)]
struct Location {
    /// City name
    city: String,
    /// ISO country code, when the city name is ambiguous
    country: Option<String>,
}

/// Plan a trip.
#[tool]
fn plan_trip(
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

#[test]
fn nested_struct_and_vec_schema() {
    insta::assert_json_snapshot!(definition(&plan_trip {}));
}

/// Set several counters at once.
#[tool]
fn set_counters(
    /// Counter name to value
    counters: HashMap<String, i32>,
) -> usize {
    counters.len()
}

#[test]
fn map_schema() {
    insta::assert_json_snapshot!(definition(&set_counters {}));
}

/// Tell the current time.
#[tool]
fn now() -> &'static str {
    "12:00"
}

#[test]
fn no_parameters_schema() {
    insta::assert_json_snapshot!(definition(&now {}));
}

/// 查询指定城市今天的天气。
/// 用户问天气、穿衣、是否带伞时使用。
#[tool]
fn get_weather(
    /// 城市名，如：北京
    city: String,
) -> String {
    city
}

#[test]
fn chinese_description_schema() {
    insta::assert_json_snapshot!(definition(&get_weather {}));
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
fn rustdoc_arguments(city: String, unit: Option<Unit>) -> String {
    format!("{city}{unit:?}")
}

#[test]
fn rustdoc_arguments_list_and_renamed_tool() {
    insta::assert_json_snapshot!(definition(&rustdoc_arguments {}));
}

/// Ignored: the attribute wins.
#[tool(description = "Says hello.")]
fn hello() -> String {
    "hello".to_owned()
}

#[test]
fn description_attribute_overrides_docs() {
    assert_eq!(definition(&hello {}).description, "Says hello.");
    assert_eq!(hello::NAME, "hello");
}
