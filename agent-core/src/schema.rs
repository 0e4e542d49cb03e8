//! Schema generation: one neutral JSON schema (draft 2020-12) per tool, from its parameter types.
//!
//! Provider adapters transform it into their dialect; this module makes the neutral one, and the
//! schema of a tool's result.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON schema of a tool's arguments object, generated from the type the arguments parse into.
///
/// The root is always an object schema with `properties` (empty for a tool without parameters).
/// `$schema` and the root `title` are left out: the title would be the name of a generated type,
/// which tells the model nothing. Nested types sit in `$defs` and are referenced from their fields.
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let mut root = root_schema::<T>().unwrap_or_default();
    root.remove("title");
    root.entry("type").or_insert_with(|| Value::from("object"));
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(root)
}

/// The JSON schema of a tool's result of type `T`, when `T` serializes as a JSON object: what MCP
/// calls a tool's `outputSchema` (which must describe an object). `None` for anything else (text,
/// numbers, lists), whose results are plain content.
pub fn output_schema<T: JsonSchema>() -> Option<Value> {
    let root = root_schema::<T>()?;
    let is_object = root.get("type").and_then(Value::as_str) == Some("object");
    is_object.then_some(Value::Object(root))
}

/// `T`'s schema as an object, without `$schema`: clients assume draft 2020-12 for MCP schemas, and
/// some validators reject a `$schema` they were not set up for.
fn root_schema<T: JsonSchema>() -> Option<Map<String, Value>> {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    // `true`/`false` schemas have no keys to keep.
    let Value::Object(mut root) = Value::from(schema) else {
        return None;
    };
    root.remove("$schema");
    Some(root)
}
