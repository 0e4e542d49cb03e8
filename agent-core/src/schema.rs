//! Schema generation: one neutral JSON schema (draft 2020-12) per tool, from its parameter types.
//!
//! Provider adapters transform it into their dialect; this module makes the neutral one, and the
//! schema of a tool's result.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

/// The JSON schema of a tool's arguments object, generated from the type the arguments parse into.
///
/// The root is always an object schema with `properties` (empty for a tool without parameters).
/// `$schema` and the root `title` are left out: the title would be the name of a generated type,
/// which tells the model nothing. Nested types sit in `$defs` and are referenced from their fields.
pub fn parameters_schema<T: JsonSchema>() -> Value {
    let mut root = root_schema::<T>().unwrap_or_default();
    root.remove("title");
    arguments_object(root)
}

/// The JSON schema of a tool's arguments, as [`parameters_schema`] delivers it, from an object
/// schema that `build` makes with the generator (draft 2020-12) rather than from a type: the types
/// `build` asks the generator for sit in `$defs`.
pub(crate) fn arguments_schema_with(
    build: impl FnOnce(&mut SchemaGenerator) -> Map<String, Value>,
) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut root = build(&mut generator);
    let mut definitions = generator.take_definitions(false);
    if !definitions.is_empty()
        && let Some(target) = root
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
    {
        target.append(&mut definitions);
    }
    arguments_object(root)
}

/// The root of an arguments schema: always an object with `properties`, so every provider takes it.
fn arguments_object(mut root: Map<String, Value>) -> Value {
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

/// `T`'s JSON schema (draft 2020-12) as an object, without `$schema`: clients assume draft 2020-12
/// for MCP schemas, and some validators reject a `$schema` they were not set up for. `None` for
/// `true` (anything goes).
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Forecast { city: String }
/// let schema = agent_core::root_schema::<Forecast>().unwrap();
/// assert_eq!(schema["type"], "object");
/// assert!(!schema.contains_key("$schema"));
/// ```
pub fn root_schema<T: JsonSchema>() -> Option<Map<String, Value>> {
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

/// Brings a tool's parameter schema from elsewhere (an MCP server, a config file; often draft-07)
/// into the neutral form the provider dialects start from: no `$schema`, definitions under `$defs`
/// with `#/$defs/...` references, and an object root with `properties`.
pub fn neutral_parameters(schema: Value) -> Value {
    let mut root = match schema {
        Value::Object(root) => root,
        // `true` or a non-schema: the arguments are an object of anything.
        _ => Map::new(),
    };
    root.remove("$schema");
    if let Some(definitions) = root.remove("definitions") {
        root.entry("$defs").or_insert(definitions);
    }
    rewrite_definition_references(&mut root);
    arguments_object(root)
}

/// `#/definitions/X` (draft-07) becomes `#/$defs/X` everywhere in `node`.
fn rewrite_definition_references(node: &mut Map<String, Value>) {
    for (key, child) in node.iter_mut() {
        match child {
            Value::String(reference) if key == "$ref" => {
                if let Some(name) = reference.strip_prefix("#/definitions/") {
                    *reference = format!("#/$defs/{name}");
                }
            }
            Value::Object(child) => rewrite_definition_references(child),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(item) = item {
                        rewrite_definition_references(item);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn draft_07_schemas_become_neutral() {
        let imported = neutral_parameters(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "point": { "$ref": "#/definitions/Point" },
                "points": { "type": "array", "items": { "$ref": "#/definitions/Point" } }
            },
            "definitions": { "Point": { "type": "object", "properties": { "x": { "type": "number" } } } }
        }));
        assert_eq!(
            imported,
            json!({
                "type": "object",
                "properties": {
                    "point": { "$ref": "#/$defs/Point" },
                    "points": { "type": "array", "items": { "$ref": "#/$defs/Point" } }
                },
                "$defs": { "Point": { "type": "object", "properties": { "x": { "type": "number" } } } }
            })
        );
    }

    #[test]
    fn a_schema_without_properties_gets_an_empty_object_root() {
        assert_eq!(
            neutral_parameters(json!(true)),
            json!({ "type": "object", "properties": {} })
        );
        assert_eq!(
            neutral_parameters(json!({ "type": "object" })),
            json!({ "type": "object", "properties": {} })
        );
    }
}
