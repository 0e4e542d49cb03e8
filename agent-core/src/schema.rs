//! Schema generation: one neutral JSON schema (draft 2020-12) per tool, from its parameter types.
//!
//! Provider adapters transform it into their dialect; this module makes the neutral one.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON schema of a tool's arguments object, generated from the type the arguments parse into.
///
/// The root is always an object schema with `properties` (empty for a tool without parameters).
/// `$schema` and the root `title` are left out: the title would be the name of a generated type,
/// which tells the model nothing. Nested types sit in `$defs` and are referenced from their fields.
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut root = match Value::from(schema) {
        Value::Object(root) => root,
        // `true`/`false` schemas never come out of a struct; keep the contract anyway.
        _ => Map::new(),
    };
    root.remove("$schema");
    root.remove("title");
    root.entry("type").or_insert_with(|| Value::from("object"));
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(root)
}
